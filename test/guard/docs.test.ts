import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BASELINE_RULES } from '../../src/guard/baseline.js';
import { PROJECT_ROOT } from '../support/cli.js';

describe('docs/guard.md', () => {
  it('lists every baseline rule a decision can name', () => {
    const docs = readFileSync(path.join(PROJECT_ROOT, 'docs/guard.md'), 'utf8');
    const missing = Object.keys(BASELINE_RULES).filter((id) => !docs.includes(`\`${id}\``));
    expect(missing).toEqual([]);
  });
});
