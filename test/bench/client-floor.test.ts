// The bench's floor of the model client alone says what a first request on the SDK path
// costs before corral does anything: it is only that if the client really sends the
// request through the SDK, and if nothing of the rest of corral is in what it loads.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { MODEL, bundleModelClient, sdkEnv, startStandin } from '../../bench/sdk.mjs';
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { cliV8Flags, tempDir } from '../../bench/lib.mjs';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLIENT_FLOOR = path.join(ROOT, 'bench/client-floor.cjs');

interface Standin {
  url: string;
  stats(id: string): Promise<{ requests: number; firstRequestAt: number }>;
  close(): void;
}

let standin: Standin;
let scratch: { dir: string; dispose(): void };
let bundle: { entry: string; modules: string[] };

beforeAll(async () => {
  standin = (await startStandin()) as Standin;
  scratch = tempDir('client-floor');
  bundle = (await bundleModelClient(scratch.dir)) as typeof bundle;
});

afterAll(() => {
  standin.close();
  scratch.dispose();
});

function runClient(id: string) {
  return spawnSync(process.execPath, [CLIENT_FLOOR, bundle.entry, MODEL, ...(cliV8Flags() as string[])], {
    env: sdkEnv(`${standin.url}/run/${id}/0/true`),
    encoding: 'utf8',
  });
}

describe('the model client floor (bench/client-floor.cjs)', () => {
  it('bundles the model client and the SDK, and none of the ticket, config, git or guard code', () => {
    const own = bundle.modules.filter((id) => id.startsWith(path.join(ROOT, 'dist/')));
    expect(own).toContain(path.join(ROOT, 'dist/agent/anthropic-model.js'));
    expect(bundle.modules.some((id) => id.includes(`${path.sep}@anthropic-ai${path.sep}sdk${path.sep}`))).toBe(true);
    for (const part of ['ticket', 'config', 'git', 'guard', 'run', 'cli']) {
      expect(own.filter((id) => id.startsWith(path.join(ROOT, 'dist', part, path.sep)))).toEqual([]);
    }
  });

  it('sends one request through the SDK to the stand-in, exits 0, and keeps its code caches', async () => {
    const first = runClient('floor-1');
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect((await standin.stats('floor-1')).requests).toBe(1);
    // The caches a later round loads from, as the CLI's chunks do.
    expect(readdirSync(scratch.dir).filter((file) => file.startsWith('model-client.cjs.') && file.endsWith('.cache'))).toHaveLength(1);
    const second = runClient('floor-2');
    expect(second.status).toBe(0);
    expect((await standin.stats('floor-2')).requests).toBe(1);
  });

  it('fails with the SDK error and exit 1 when the API refuses the request', () => {
    // No stand-in run of that shape: the stand-in answers 404, which the SDK turns into an error.
    const result = spawnSync(process.execPath, [CLIENT_FLOOR, bundle.entry, MODEL], {
      env: sdkEnv(`${standin.url}/no-such-path`),
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/404|not.found/i);
  });
});
