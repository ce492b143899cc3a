import { env } from "cloudflare:workers";
import { shards } from "../../src/store/shards";

/** The shards of the `sharded` project (vitest.config.ts: D1_SHARDS). */
export const NAMES = ["DB", "DB_1", "DB_2", "DB_3"];

/** The D1 database bound as `name`. */
export function dbNamed(name: string): D1Database {
  const shard = shards(env).find((s) => s.name === name);
  if (!shard) throw new Error(`no shard ${name}`);
  return shard.db;
}
