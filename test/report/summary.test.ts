import { describe, expect, it } from 'vitest';
import { formatCount } from '../../src/report/summary.js';

describe('formatCount', () => {
  it('groups thousands with commas, as en-US does', () => {
    for (const n of [0, 7, 999, 1000, 12_345, 1_234_567, 1_000_000_000, -4500]) {
      expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
    }
  });
});
