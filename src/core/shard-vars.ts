/**
 * The two shard vars' rules, shared by src/config.ts (which parses and logs them once per isolate), the
 * store's own env lookups (src/store/shards/) and scripts/migrate.ts: one rule, so that every reader names
 * the same shards.
 */

const BINDING_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

/** A range of numbered bindings, `DB_1..DB_400`: same prefix, numbers from..to. */
const RANGE = /^([A-Z_][A-Z0-9_]*?)(\d+)\.\.([A-Z_][A-Z0-9_]*?)(\d+)$/;
/** Bindings one range may name (a Worker has far fewer D1 bindings than this). */
export const MAX_RANGE = 5000;

/** The bindings one D1_SHARDS item names: itself, or every binding of a range `DB_1..DB_400` (none when malformed). */
export function expand(item: string): string[] {
  const range = RANGE.exec(item);
  if (!range || range[1] !== range[3]) return BINDING_NAME.test(item) ? [item] : [];
  const from = Number(range[2]);
  const to = Number(range[4]);
  if (to < from || to - from >= MAX_RANGE) return [];
  return Array.from({ length: to - from + 1 }, (_, i) => `${range[1]}${from + i}`).filter((n) => BINDING_NAME.test(n));
}

/** D1_SHARDS read: the shard binding names, and the items left out because they name no binding. */
export interface ShardNames {
  names: string[];
  dropped: string[];
}

/**
 * Reads `D1_SHARDS`: binding names, comma separated, deduplicated; an item `PREFIX<m>..PREFIX<n>` names
 * every binding from m to n, so hundreds of shards fit in a few bytes of the var (`"DB,DB_1..DB_400"`).
 * A malformed item is left out (and listed in `dropped`); no name at all is `["DB"]`.
 *
 * @example readShardNames("DB,DB_1..DB_2,db-3") // { names: ["DB", "DB_1", "DB_2"], dropped: ["db-3"] }
 */
export function readShardNames(value: string | undefined): ShardNames {
  const items = (value ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  const dropped = items.filter((item) => expand(item).length === 0);
  const names = items.flatMap(expand);
  return { names: names.length > 0 ? [...new Set(names)] : ["DB"], dropped };
}

/** The location hints Durable Objects accept (developers.cloudflare.com/durable-objects/reference/data-location/). */
export const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"] as const;

export type LocationHint = (typeof LOCATION_HINTS)[number];

function isHint(value: string): value is LocationHint {
  return (LOCATION_HINTS as readonly string[]).includes(value);
}

/** D1_SHARD_LOCATIONS read: the hint per shard binding, or what is wrong with it (after the var's name: `'DB' is not BINDING=hint …`). */
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
    if (!match || bindings.length === 0) return { ok: false, message: `'${pair}' is not BINDING=hint or FIRST..LAST=hint` };
    const hint = match[2];
    if (!isHint(hint)) return { ok: false, message: `'${hint}' is not a location hint (${LOCATION_HINTS.join(", ")})` };
    for (const binding of bindings) {
      if (hints.has(binding)) return { ok: false, message: `names ${binding} twice` };
      hints.set(binding, hint);
    }
  }
  return { ok: true, hints };
}
