import { describe, expect, it } from 'vitest';
import { InternalError } from '../../src/errors.js';
import { compileCondition, prepareConditions } from '../../src/policy/conditions.js';

// Its own file, so the module starts with the CEL library not loaded (vitest isolates files).
describe('prepareConditions', () => {
  it('leaves the CEL library unloaded for data without a `when`, and compiling then fails closed', async () => {
    await prepareConditions({ policy: { deny: ['Bash(curl:*)'], rules: [] }, checks: [{ name: 'when', run: 'true' }] });
    expect(() => compileCondition('true')).toThrow(InternalError);
  });

  it('loads it for a `when` at any depth, after which conditions compile and evaluate', async () => {
    await prepareConditions({ policy: { rules: [{ id: 'r', when: 'tool == "Bash"', effect: 'deny' }] } });
    expect(compileCondition('tool == "Bash"')({ tool: 'Bash' })).toBe(true);
    expect(() => compileCondition('tool ==')).toThrow(/./);
  });
});
