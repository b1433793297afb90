import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

// A run on a real model loads the chunk that holds the Anthropic SDK before its first
// request, and compiles what it holds. corral calls one resource of the SDK, messages;
// the package's default export attaches every other one too (models, files, skills,
// beta, ...), three quarters of the SDK's code. This reads the built chunk (`npm test`
// builds first) for the resource classes it defines.

const BUNDLE = path.join(PROJECT_ROOT, 'dist/bundle');

/** The code of the chunk whose source map names src/agent/anthropic-model.ts. */
function modelClientChunk(): string {
  const maps = readdirSync(BUNDLE).filter((name) => name.endsWith('.cjs.map'));
  const found = maps.filter((name) => {
    const map = JSON.parse(readFileSync(path.join(BUNDLE, name), 'utf8')) as { sources: string[] };
    return map.sources.some((source) => source.endsWith('src/agent/anthropic-model.ts'));
  });
  expect(found).toHaveLength(1);
  return readFileSync(path.join(BUNDLE, found[0]!.slice(0, -'.map'.length)), 'utf8');
}

/** The names of the SDK resource classes a chunk defines (`class Beta extends APIResource`). */
function resourceClasses(code: string): string[] {
  return [...code.matchAll(/\bclass (\w+?)(?:\$\d+)? extends APIResource\b/g)].map((match) => match[1]!);
}

describe("the model client's chunk", () => {
  it('holds the SDK resource a run calls, messages, and none of the others', () => {
    const classes = resourceClasses(modelClientChunk());
    expect(classes).toContain('Messages');
    expect(classes.filter((name) => !['Messages', 'Batches'].includes(name))).toEqual([]);
  });
});
