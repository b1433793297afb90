// Per-step overhead and peak memory of whole `corral run` processes on replay tickets of
// N `Bash` steps (sandbox none), against one Node process spawning `bash -c true` N times
// in the same rounds; and how both grow from 50 to 1,000 steps.
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { ROOT, bashReplayScript, benchTicket, corralRun, expectCallsRan, fitLine, inTurn, makeRepo, measure, round, summarise, tempDir } from './lib.mjs';

const BASELINE = path.join(ROOT, 'bench/spawn-baseline.mjs');
/** Prints 1 MiB: 16,384 lines of 64 bytes. */
export const MEGABYTE_COMMAND = 'yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY | head -c 1048576';

export async function benchSteps({ quick = false } = {}) {
  const scratch = tempDir('steps');
  try {
    const repo = makeRepo(path.join(scratch.dir, 'repo'), { files: 20 });
    let runs = 0;
    const ticketOf = (steps, command, label) => {
      writeFileSync(path.join(repo, `${label}.replay.yaml`), bashReplayScript(steps, command));
      const file = path.join(repo, `${label}.ticket.yaml`);
      writeFileSync(file, benchTicket(`${label}.replay.yaml`, steps));
      return file;
    };
    const runTicket = (file, steps) => {
      const runsDir = path.join(scratch.dir, 'runs', String(runs++));
      const result = corralRun(file, { repo, runsDir });
      expectCallsRan(runsDir, steps);
      return result;
    };

    const sizes = quick ? [[50, 2], [200, 3], [1000, 1]] : [[50, 5], [200, 5], [1000, 3]];
    const scale = [];
    for (const [steps, rounds] of sizes) {
      const ticket = ticketOf(steps, 'true', `true-${steps}`);
      const run = [];
      const base = [];
      for (let i = 0; i < rounds; i++) {
        inTurn(
          i,
          () => base.push(measure([process.execPath, BASELINE, String(steps)])),
          () => run.push(runTicket(ticket, steps)),
        );
      }
      const runMs = summarise(run.map((r) => r.ms));
      const baseMs = summarise(base.map((r) => r.ms));
      scale.push({
        steps,
        rounds,
        runMs,
        baselineMs: baseMs,
        overheadPerStepMs: round((runMs.median - baseMs.median) / steps),
        // The same from each round's own pair (run and baseline back to back): load that
        // drifts between rounds cancels, so the spread shows how far one figure can be trusted.
        pairedOverheadPerStepMs: summarise(run.map((r, i) => (r.ms - base[i].ms) / steps)),
        peakRssMb: summarise(run.map((r) => r.rssMb)),
        baselinePeakRssMb: summarise(base.map((r) => r.rssMb)),
      });
    }

    const megabyte = [];
    const megaSizes = quick ? [[200, 1]] : [[50, 2], [200, 3], [1000, 1]];
    for (const [steps, rounds] of megaSizes) {
      const ticket = ticketOf(steps, MEGABYTE_COMMAND, `megabyte-${steps}`);
      const run = [];
      for (let i = 0; i < rounds; i++) run.push(runTicket(ticket, steps));
      megabyte.push({ steps, rounds, runMs: summarise(run.map((r) => r.ms)), peakRssMb: summarise(run.map((r) => r.rssMb)) });
    }

    const at200 = scale.find((s) => s.steps === 200);
    const mega200 = megabyte.find((s) => s.steps === 200);
    const overheadLine = fitLine(scale.map((s) => ({ x: s.steps, y: s.runMs.median - s.baselineMs.median })));
    const rssLine = fitLine(scale.map((s) => ({ x: s.steps, y: s.peakRssMb.median })));
    const megaLine = megabyte.length > 1 ? fitLine(megabyte.map((s) => ({ x: s.steps, y: s.peakRssMb.median }))) : null;
    return {
      command: { true: 'true', megabyte: MEGABYTE_COMMAND },
      overheadPerStepMs: at200.overheadPerStepMs,
      peakRssMb: at200.peakRssMb.median,
      megabytePeakRssMb: mega200.peakRssMb.median,
      scale,
      megabyte,
      slope: {
        // The marginal cost of one more step, from a line through every size: flat means
        // it matches the per-step figure at 200 and the fixed part stays in the intercept.
        overheadMsPerStep: round(overheadLine.slope, 3),
        fixedOverheadMs: round(overheadLine.intercept, 1),
        peakRssKbPerStep: round(rssLine.slope * 1024, 1),
        ...(megaLine ? { megabytePeakRssKbPerStep: round(megaLine.slope * 1024, 1) } : {}),
      },
    };
  } finally {
    scratch.dispose();
  }
}
