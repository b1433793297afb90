// Once for the whole suite. Test files that make corral's scratch dirs in their own
// process (the git launcher's, snapshot indexes) lose them when vitest ends that process
// with a signal, before its exit handlers run; corral's own rule for a dead process's
// temp dirs removes them once the suite is done, as the next run would on a user's machine.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { deadOwnersTemps } from '../../src/proc/owner.js';

export function teardown(): void {
  for (const temp of deadOwnersTemps(tmpdir())) {
    try {
      rmSync(temp.path, { recursive: true, force: true });
    } catch {
      // Another user's folder in a shared temp dir, or one holding read-only files: not the suite's to fail on.
    }
  }
}
