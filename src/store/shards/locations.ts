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
 * Durable Object is created next to its D1 primary. Empty or unset: no hints.
 * A malformed pair, an unknown hint or a binding named twice makes the whole
 * value invalid (the caller then places objects without hints).
 *
 * @example parseShardLocations("DB=weur") // => { ok: true, hints: Map { "DB" => "weur" } }
 */
export function parseShardLocations(value: string | undefined): ShardLocations {
  const hints = new Map<string, LocationHint>();
  for (const pair of (value ?? "").split(",").map((p) => p.trim()).filter((p) => p.length > 0)) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([a-z]+)$/.exec(pair);
    if (!match) return { ok: false, message: `D1_SHARD_LOCATIONS: '${pair}' is not BINDING=hint` };
    const [, binding, hint] = match;
    if (!isHint(hint)) return { ok: false, message: `D1_SHARD_LOCATIONS: '${hint}' is not a location hint (${LOCATION_HINTS.join(", ")})` };
    if (hints.has(binding)) return { ok: false, message: `D1_SHARD_LOCATIONS names ${binding} twice` };
    hints.set(binding, hint);
  }
  return { ok: true, hints };
}
