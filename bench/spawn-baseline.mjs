// The baseline of the per-step figures: one Node process that spawns `bash -c true` N
// times in a row, piping its output as corral does, and nothing else. Whatever a
// corral run costs beyond this is corral's own.
import { spawn } from 'node:child_process';

const count = Number(process.argv[2] ?? 200);
for (let i = 0; i < count; i++) {
  const child = spawn('bash', ['--norc', '-c', 'true'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout.resume();
  child.stderr.resume();
  const code = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`bash -c true exited ${code}`);
}
