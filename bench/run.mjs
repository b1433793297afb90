// `npm run bench`: corral's speed figures, printed as a table and kept in bench/results.json.
// Not part of `npm test`: timings belong here, never in tests that must not flake.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchGuard } from './guard.mjs';
import { benchSandbox } from './sandbox.mjs';

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results.json');

const guard = await benchGuard();
const sandbox = await benchSandbox();
const rows = [
  ['guard decisions per second', `${guard.decisionsPerSecond}`, `${guard.decisions} decisions over ${guard.cases} corpus cases`],
  ['guard decision latency, median', `${guard.medianMs} ms`, ''],
  ['guard decision latency, p99', `${guard.p99Ms} ms`, `max ${guard.maxMs.toFixed(3)} ms`],
  ['shell parser load (fresh process)', `${guard.parserLoadMs.median.toFixed(1)} ms`, `min ${guard.parserLoadMs.min.toFixed(1)}, max ${guard.parserLoadMs.max.toFixed(1)}`],
  ...(sandbox.measured
    ? [
        ['command without sandbox, median', `${sandbox.noneMedianMs.toFixed(1)} ms`, `\`true\` through the process runner, ${sandbox.commands} times`],
        ['command in bubblewrap, median', `${sandbox.bwrapMedianMs.toFixed(1)} ms`, `the same commands, alternating`],
        ['sandbox overhead per command, median', `${sandbox.overheadMedianMs.toFixed(1)} ms`, `p90 ${sandbox.overheadP90Ms.toFixed(1)} ms`],
      ]
    : [['sandbox overhead per command', 'n/a', `not measured: ${sandbox.reason}`]]),
];
const width = Math.max(...rows.map((row) => row[0].length));
for (const [name, value, note] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(10)}  ${note}`);

let results = {};
try {
  results = JSON.parse(readFileSync(RESULTS, 'utf8'));
} catch {
  // First run: start a new file.
}
results.machine = { node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', platform: `${os.platform()} ${os.release()}` };
results.guard = { measuredAt: new Date().toISOString(), ...guard };
results.sandbox = { measuredAt: new Date().toISOString(), ...sandbox };
writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nwritten to ${path.relative(process.cwd(), RESULTS)}`);
