import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_RULES } from '../../src/policy/rule-ids.js';
import { PROJECT_ROOT } from '../support/cli.js';

describe('docs/guard.md', () => {
  it('names every rule corral decides by itself', () => {
    const docs = readFileSync(path.join(PROJECT_ROOT, 'docs/guard.md'), 'utf8');
    const missing = Object.keys(BUILT_IN_RULES).filter((id) => !docs.includes(`\`${id}\``));
    expect(missing).toEqual([]);
  });
});
