import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { shards } from "../../src/store/shards/shards";

for (const shard of shards(env)) await applyD1Migrations(shard.db, env.TEST_MIGRATIONS);
