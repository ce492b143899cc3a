import { z } from "zod";

/** USD per one million tokens. */
export interface Price {
  prompt: number;
  completion: number;
}

export type PriceTable = Record<string, Price>;

/** List prices of common OpenAI models (USD per 1M tokens); PRICES_JSON overrides or extends them. */
export const DEFAULT_PRICES: PriceTable = {
  "gpt-4.1": { prompt: 2, completion: 8 },
  "gpt-4.1-mini": { prompt: 0.4, completion: 1.6 },
  "gpt-4.1-nano": { prompt: 0.1, completion: 0.4 },
  "gpt-4o": { prompt: 2.5, completion: 10 },
  "gpt-4o-mini": { prompt: 0.15, completion: 0.6 },
  "gpt-4-turbo": { prompt: 10, completion: 30 },
  "gpt-3.5-turbo": { prompt: 0.5, completion: 1.5 },
  "gpt-5": { prompt: 1.25, completion: 10 },
  "gpt-5-mini": { prompt: 0.25, completion: 2 },
  "gpt-5-nano": { prompt: 0.05, completion: 0.4 },
  o1: { prompt: 15, completion: 60 },
  o3: { prompt: 2, completion: 8 },
  "o3-mini": { prompt: 1.1, completion: 4.4 },
  "o4-mini": { prompt: 1.1, completion: 4.4 },
};

const priceTable = z.record(z.string(), z.object({ prompt: z.number().nonnegative(), completion: z.number().nonnegative() }));

/**
 * The defaults merged with PRICES_JSON; a malformed PRICES_JSON is ignored, never fatal, and what was wrong
 * goes to `onInvalid` (src/config.ts logs it as `prices_json_invalid`). Pure.
 *
 * @example pricesOf('{"grok-3":{"prompt":3,"completion":15}}')["grok-3"] // { prompt: 3, completion: 15 }
 */
export function pricesOf(json: string | undefined, onInvalid: (error: string) => void = () => undefined): PriceTable {
  if (!json) return DEFAULT_PRICES;
  try {
    return { ...DEFAULT_PRICES, ...priceTable.parse(JSON.parse(json)) };
  } catch (error) {
    onInvalid(String(error));
    return DEFAULT_PRICES;
  }
}

/**
 * The price of a model: an exact entry, else the longest entry that prefixes
 * it (`gpt-4o-2024-08-06` -> `gpt-4o`, `ft:gpt-4.1:org:x` -> `gpt-4.1`), else null.
 */
export function priceOf(table: PriceTable, model: string): Price | null {
  if (table[model]) return table[model];
  const bare = model.startsWith("ft:") ? model.slice(3).split(":")[0] : model;
  if (table[bare]) return table[bare];
  let best: string | null = null;
  for (const name of Object.keys(table)) if (bare.startsWith(`${name}-`) && (!best || name.length > best.length)) best = name;
  return best ? table[best] : null;
}

/** Estimated USD saved for the given tokens, or null when the model has no price. */
export function costSaved(table: PriceTable, model: string, promptTokens: number, completionTokens: number): number | null {
  const price = priceOf(table, model);
  if (!price) return null;
  return (promptTokens * price.prompt + completionTokens * price.completion) / 1_000_000;
}
