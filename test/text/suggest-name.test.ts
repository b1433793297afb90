import { describe, expect, it } from 'vitest';
import { suggestName } from '../../src/text/suggest-name.js';

const KNOWN = ['id', 'task', 'allow', 'allow_empty', 'check_rounds', 'timeout_seconds', 'name'];

describe('suggestName', () => {
  it.each([
    ['alow', 'allow'],
    ['Allow', 'allow'],
    ['taks', 'task'],
    ['nmae', 'name'],
    ['checkRounds', 'check_rounds'],
    ['allow-empty', 'allow_empty'],
    ['timeoutSeconds', 'timeout_seconds'],
  ])('suggests %s → %s', (name, expected) => {
    expect(suggestName(name, KNOWN)).toBe(expected);
  });

  it.each(['ab', 'zzzzz', 'timeout', 'description'])('suggests nothing for %s', (name) => {
    expect(suggestName(name, KNOWN)).toBeUndefined();
  });
});
