import { describe, expect, it } from 'vitest';
import { extractFollowUps } from '../../src/trace/result.js';
import { mostSevereExitCode } from '../../src/trace/outcome.js';
import { decideStatus } from '../../src/trace/outcome.js';

const held = { ok: true, verdicts: [{ change: { kind: 'modified' as const, path: 'a' }, allowed: true }] };
const broken = { ok: false, verdicts: [{ change: { kind: 'modified' as const, path: 'b' }, allowed: false, reason: 'matches no allow glob' }] };

describe('decideStatus', () => {
  it('passes only a finished run with a change inside the fence', () => {
    expect(decideStatus({ kind: 'finished', finalText: '' }, held, { allowEmpty: false }).status).toBe('passed');
    expect(decideStatus({ kind: 'finished', finalText: '' }, { ok: true, verdicts: [] }, { allowEmpty: false }).status).toBe('failed');
    expect(decideStatus({ kind: 'finished', finalText: '' }, { ok: true, verdicts: [] }, { allowEmpty: true }).status).toBe('passed');
  });

  it('reports a breached fence over any outcome but an interruption or a bug', () => {
    for (const outcome of [
      { kind: 'finished' as const, finalText: '' },
      { kind: 'checks_failed' as const, finalText: '', rounds: 3 },
      { kind: 'budget_exhausted' as const, exceeded: { which: 'steps' as const, detail: '' }, finalText: '' },
      { kind: 'model_error' as const, message: 'x', finalText: '' },
    ]) {
      expect(decideStatus(outcome, broken, { allowEmpty: false }).status).toBe('fence_violated');
    }
    expect(decideStatus({ kind: 'interrupted', finalText: '' }, broken, { allowEmpty: false }).status).toBe('interrupted');
  });

  it('never reports success without a finished loop', () => {
    expect(decideStatus(undefined, held, { allowEmpty: true }).status).toBe('internal_error');
    expect(decideStatus({ kind: 'refused', finalText: '' }, held, { allowEmpty: true }).status).toBe('refused');
    expect(decideStatus({ kind: 'setup_failed', reason: 'x' }, held, { allowEmpty: true }).status).toBe('failed');
  });
});

describe('mostSevereExitCode', () => {
  it('follows the documented order', () => {
    expect(mostSevereExitCode([])).toBe(0);
    expect(mostSevereExitCode([0, 1, 3])).toBe(3);
    expect(mostSevereExitCode([4, 3, 1])).toBe(4);
    expect(mostSevereExitCode([5, 6])).toBe(6);
    expect(mostSevereExitCode([6, 2])).toBe(2);
    expect(mostSevereExitCode([2, 64])).toBe(64);
    expect(mostSevereExitCode([64, 70])).toBe(70);
    expect(mostSevereExitCode([70, 130])).toBe(130);
  });
});

describe('extractFollowUps', () => {
  it('takes the QUEUE: lines of the final message', () => {
    expect(extractFollowUps('Done.\nQUEUE: a thing\n  QUEUE:  another  \nQUEUE:\nnot QUEUE: this')).toEqual(['a thing', 'another']);
  });
});
