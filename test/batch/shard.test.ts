import { describe, expect, it } from 'vitest';
import { inShard, parseShard, shardOf } from '../../src/batch/shard.js';

describe('shards', () => {
  const ids = Array.from({ length: 400 }, (_, i) => `ticket-${i}`);

  it('put every ticket in exactly one of n shards, spread roughly evenly', () => {
    for (const count of [1, 2, 3, 7]) {
      const sizes = Array.from({ length: count }, (_, i) => ids.filter((id) => inShard(id, { index: i + 1, count })).length);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(ids.length);
      for (const size of sizes) expect(size).toBeGreaterThan((ids.length / count) * 0.7);
    }
  });

  it('depend on the id alone, so they are the same on every run and machine', () => {
    // Pinned values: changing the hash would reshuffle every CI matrix that relies on it.
    expect(['fix-fees', 'add-limit', 'ticket-0', 'ticket-1'].map((id) => shardOf(id, 4))).toEqual([4, 4, 2, 2]);
  });

  it('parse i/n with 1 ≤ i ≤ n, and refuse anything else with an example', () => {
    expect(parseShard('2/4')).toEqual({ index: 2, count: 4 });
    expect(parseShard(' 1 / 1 ')).toEqual({ index: 1, count: 1 });
    for (const bad of ['0/4', '5/4', '1/0', '1', 'a/b', '1/2/3', '-1/2', '1.5/3']) expect(() => parseShard(bad), bad).toThrow(/expected i\/n/);
  });
});
