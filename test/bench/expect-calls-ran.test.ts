// The per-step benches time runs of Bash calls; a call the guard refuses costs no spawn,
// so a run whose calls were refused would pass for a fast one. expectCallsRan reads the
// run's trace and must tell the two apart, on real runs of the real CLI.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { bashReplayScript, benchTicket, corralRun, expectCallsRan, makeRepo, tempDir } from '../../bench/lib.mjs';

let scratch: { dir: string; dispose(): void };
let repo: string;
beforeAll(() => {
  scratch = tempDir('expect-calls');
  repo = makeRepo(path.join(scratch.dir, 'repo'));
});
afterAll(() => scratch.dispose());

function runOf(label: string, ticketExtra: string): string {
  writeFileSync(path.join(repo, `${label}.replay.yaml`), bashReplayScript(3, 'true'));
  const ticket = path.join(repo, `${label}.ticket.yaml`);
  writeFileSync(ticket, `${benchTicket(`${label}.replay.yaml`, 3)}${ticketExtra}`);
  const runsDir = path.join(scratch.dir, 'runs', label);
  corralRun(ticket, { repo, runsDir });
  return runsDir;
}

describe('expectCallsRan', () => {
  it('passes a run whose Bash calls all ran', () => {
    const runsDir = runOf('ran', '');
    expect(() => expectCallsRan(runsDir, 3)).not.toThrow();
    expect(() => expectCallsRan(runsDir, 4)).toThrow(/ran 3 of its 4 Bash calls/);
  }, 60_000);

  it('fails a run whose calls the guard refused, and names the rule', () => {
    const runsDir = runOf('refused', 'policy: {deny: ["Bash(true)"]}\n');
    expect(() => expectCallsRan(runsDir, 3)).toThrow(/ran 0 of its 3 Bash calls; the guard answered deny \(Bash\(true\)/);
  }, 60_000);
});
