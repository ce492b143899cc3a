import { expand } from "./shards";

/** The location hints Durable Objects accept (developers.cloudflare.com/durable-objects/reference/data-location/). */
export const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"] as const;

export type LocationHint = (typeof LOCATION_HINTS)[number];

function isHint(value: string): value is LocationHint {
  return (LOCATION_HINTS as readonly string[]).includes(value);
}

/** D1_SHARD_LOCATIONS read: the hint per shard binding, or what is wrong with it. */
export type ShardLocations = { ok: true; hints: ReadonlyMap<string, LocationHint> } | { ok: false; message: string };

/**
 * Parses D1_SHARD_LOCATIONS, `BINDING=hint` pairs separated by commas
 * (`"DB=weur,DB_1=enam"`): where each shard's primary is, so that a tree's
 * Durable Object is created next to its D1 primary. A pair may name a range of
 * bindings as D1_SHARDS does (`"DB=weur,DB_1..DB_200=weur,DB_201..DB_400=enam"`).
 * Empty or unset: no hints. A malformed pair, an unknown hint or a binding
 * named twice makes the whole value invalid (the caller then places objects
 * without hints).
 *
 * @example parseShardLocations("DB=weur") // => { ok: true, hints: Map { "DB" => "weur" } }
 */
export function parseShardLocations(value: string | undefined): ShardLocations {
  const hints = new Map<string, LocationHint>();
  for (const pair of (value ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*(?:\.\.[A-Za-z_][A-Za-z0-9_]*)?)\s*=\s*([a-z]+)$/.exec(pair);
    const bindings = match ? expand(match[1]) : [];
    if (!match || bindings.length === 0) return { ok: false, message: `D1_SHARD_LOCATIONS: '${pair}' is not BINDING=hint or FIRST..LAST=hint` };
    const hint = match[2];
    if (!isHint(hint)) return { ok: false, message: `D1_SHARD_LOCATIONS: '${hint}' is not a location hint (${LOCATION_HINTS.join(", ")})` };
    for (const binding of bindings) {
      if (hints.has(binding)) return { ok: false, message: `D1_SHARD_LOCATIONS names ${binding} twice` };
      hints.set(binding, hint);
    }
  }
  return { ok: true, hints };
}

/** The hints `wrangler d1 create --location` takes: a D1 primary can be placed in these regions only. */
export const D1_LOCATIONS: readonly LocationHint[] = ["wnam", "enam", "weur", "eeur", "apac", "oc"];
