import type { LocationHint } from "../../core/shard-vars";

/** D1_SHARD_LOCATIONS' rule lives in core, beside D1_SHARDS' (src/core/shard-vars.ts); src/config.ts parses both. */
export { LOCATION_HINTS, parseShardLocations, type LocationHint, type ShardLocations } from "../../core/shard-vars";

/** The hints `wrangler d1 create --location` takes: a D1 primary can be placed in these regions only. */
export const D1_LOCATIONS: readonly LocationHint[] = ["wnam", "enam", "weur", "eeur", "apac", "oc"];
