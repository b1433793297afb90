// What a turn cost, from the API's own usage counts. Only models whose public prices are
// well known are listed: for any other model the cost is unknown (null), never guessed.
import type { TokenUsage } from '../trace/records.js';

/** US dollars per million tokens. Cache writes are the 5-minute kind, which is what corral asks for. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheWritePerMTok: number;
  cacheReadPerMTok: number;
}

const SONNET_4: ModelPrice = Object.freeze({ inputPerMTok: 3, outputPerMTok: 15, cacheWritePerMTok: 3.75, cacheReadPerMTok: 0.3 });
const OPUS_4_5: ModelPrice = Object.freeze({ inputPerMTok: 5, outputPerMTok: 25, cacheWritePerMTok: 6.25, cacheReadPerMTok: 0.5 });
const HAIKU_4_5: ModelPrice = Object.freeze({ inputPerMTok: 1, outputPerMTok: 5, cacheWritePerMTok: 1.25, cacheReadPerMTok: 0.1 });

const PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'claude-sonnet-4-5': SONNET_4,
  'claude-sonnet-4-6': SONNET_4,
  'claude-opus-4-5': OPUS_4_5,
  'claude-opus-4-6': OPUS_4_5,
  'claude-opus-4-7': OPUS_4_5,
  'claude-opus-4-8': OPUS_4_5,
  'claude-haiku-4-5': HAIKU_4_5,
});

/**
 * The price of a model id as a ticket names it or as the API reports it: an alias
 * (`claude-sonnet-4-5`) or a dated snapshot of it (`claude-sonnet-4-5-20250929`).
 * Only a date may follow the alias, so `claude-opus-4-50` or `claude-opus-4-5-fast`
 * stay unknown rather than borrowing a price that may not be theirs.
 */
export function priceOf(model: string, configured: PriceTable = {}): ModelPrice | null {
  const dated = /^(.*)-\d{8}$/.exec(model);
  const alias = dated?.[1] ?? model;
  // Prices from config come first: they add models and correct known ones.
  for (const table of [configured, PRICES]) {
    for (const name of [model, alias]) if (Object.hasOwn(table, name)) return table[name] ?? null;
  }
  return null;
}

/** Prices by model id, from config. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Cost in US dollars of the given usage, or null when the model's price is unknown. */
export function costUsd(model: string, usage: TokenUsage, configured: PriceTable = {}): number | null {
  const price = priceOf(model, configured);
  if (!price) return null;
  return (
    (usage.inputTokens * price.inputPerMTok +
      usage.outputTokens * price.outputPerMTok +
      usage.cacheWriteTokens * price.cacheWritePerMTok +
      usage.cacheReadTokens * price.cacheReadPerMTok) /
    1_000_000
  );
}
