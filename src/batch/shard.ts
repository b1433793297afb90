import { createHash } from 'node:crypto';
import { UsageError } from '../errors.js';
import type { ShardSpec } from '../report/batch-report.js';

// A CI matrix of n jobs runs `--shard 1/n` … `--shard n/n`. Each ticket's shard depends on
// its id alone, so the shards cover a folder exactly once, every job agrees on the split
// without talking to the others, and adding a ticket moves no other ticket.

/** Parses `i/n` (index from 1, as CI matrices and Jest's --shard count). */
export function parseShard(text: string): ShardSpec {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) {
    throw new UsageError(`--shard ${JSON.stringify(text)}: expected i/n with 1 ≤ i ≤ n, e.g. --shard 2/4 (from a Kubernetes JOB_COMPLETION_INDEX, which counts from 0, pass $((JOB_COMPLETION_INDEX + 1))/n)`);
  }
  return { index, count };
}

/** The shard (1..count) a ticket id belongs to: the first 48 bits of its SHA-256, modulo count. */
export function shardOf(ticketId: string, count: number): number {
  const digest = createHash('sha256').update(ticketId, 'utf8').digest();
  return (digest.readUIntBE(0, 6) % count) + 1;
}

export function inShard(ticketId: string, shard: ShardSpec): boolean {
  return shardOf(ticketId, shard.count) === shard.index;
}
