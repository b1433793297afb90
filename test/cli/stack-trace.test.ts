import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli } from '../support/cli.js';
import { makeDemoRepo } from '../support/repo.js';

interface Frame {
  fn: string;
  file: string;
  line: number;
  column: number;
}

/**
 * The stack printed with an internal error: a file where the default runs dir's folder
 * goes fails every ticket (exit 70). A bad --runs-dir no longer serves: it is refused up front.
 */
async function internalErrorStack(env: Record<string, string> = {}): Promise<Frame[]> {
  const repo = makeDemoRepo();
  writeFileSync(path.join(repo, '.corral'), 'a file where the runs folder goes\n');
  const run = await runCli(['run', 'tickets/cap-fine.yaml'], { cwd: repo, env });
  expect(run.exitCode, run.stderr).toBe(70);
  const start = run.stderr.indexOf('internal error: Error: cannot make the run directory');
  expect(run.stderr).toContain('ENOTDIR');
  expect(start, run.stderr).toBeGreaterThanOrEqual(0);
  const frames: Frame[] = [];
  for (const line of run.stderr.slice(start).split('\n').slice(1)) {
    const frame = /^\s+at (?:async )?(.+?) \((.+):(\d+):(\d+)\)$/.exec(line);
    if (!frame) break;
    frames.push({ fn: frame[1]!, file: frame[2]!, line: Number(frame[3]), column: Number(frame[4]) });
  }
  return frames;
}

// A user's report of an internal error must point at code a person can read.
describe('stack traces of the built CLI', () => {
  it('name real bundle files and lines of readable code, which the source maps lead back to src/', async () => {
    const frames = (await internalErrorStack()).filter((frame) => frame.file.startsWith(path.join(PROJECT_ROOT, 'dist/bundle/')));
    expect(frames.length).toBeGreaterThan(2);
    for (const frame of frames) {
      const lines = readFileSync(frame.file, 'utf8').split('\n');
      // Not minified: the frame's line is a line of code, and its function is declared
      // above it under the name the frame gives.
      expect(lines[frame.line - 1]!.length).toBeLessThan(200);
      const name = frame.fn.split('.').at(-1)!;
      if (/^\w+$/.test(name)) expect(lines.slice(0, frame.line).some((text) => new RegExp(`\\b${name}\\b`).test(text))).toBe(true);
      const map = new SourceMap(JSON.parse(readFileSync(`${frame.file}.map`, 'utf8')));
      const origin = map.findEntry(frame.line - 1, frame.column - 1);
      expect('originalSource' in origin).toBe(true);
      if ('originalSource' in origin && !origin.originalSource.includes('node_modules')) {
        const source = path.resolve(path.dirname(frame.file), origin.originalSource);
        expect(source.startsWith(path.join(PROJECT_ROOT, 'src/')), source).toBe(true);
        expect(existsSync(source)).toBe(true);
      }
    }
  });

  it('name src/*.ts files and lines under --enable-source-maps', async () => {
    const frames = await internalErrorStack({ NODE_OPTIONS: '--enable-source-maps' });
    const ours = frames.filter((frame) => frame.file.startsWith(path.join(PROJECT_ROOT, 'src/')));
    expect(ours.length, JSON.stringify(frames)).toBeGreaterThan(2);
    expect(frames.some((frame) => frame.file.includes('dist/bundle'))).toBe(false);
    for (const frame of ours) {
      expect(frame.file).toMatch(/\.ts$/);
      const lines = readFileSync(frame.file, 'utf8').split('\n');
      expect(lines.length).toBeGreaterThanOrEqual(frame.line);
      const name = frame.fn.split('.').at(-1)!;
      if (/^\w+$/.test(name)) expect(lines.slice(0, frame.line).some((text) => new RegExp(`\\b${name}\\b`).test(text))).toBe(true);
    }
  });
});
