// The baseline of the per-step figures: one Node process that spawns `bash -c true` N
// times in a row, piping its output as corral does, and nothing else. Whatever a
// corral run costs beyond this is corral's own. With `--bwrap`, each `bash -c true` runs
// in a bare bubblewrap (the namespaces and the root mounts corral's sandbox starts with,
// none of its binds): the cost of bubblewrap itself, beside which corral's sandbox is seen.
import { spawn } from 'node:child_process';

const count = Number(process.argv[2] ?? 200);
const bwrap = process.argv.includes('--bwrap');
const BWRAP = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-net', '--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--'];
const [file, ...args] = bwrap ? ['bwrap', ...BWRAP, 'bash', '--norc', '-c', 'true'] : ['bash', '--norc', '-c', 'true'];
for (let i = 0; i < count; i++) {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout.resume();
  child.stderr.resume();
  const code = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${code}`);
}
