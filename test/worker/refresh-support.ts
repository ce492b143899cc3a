import { env } from "cloudflare:workers";
import type { StoredAnswer } from "../../src/core/answer";
import { configOf } from "../../src/config";
import { isolate } from "../../src/engine/isolate";
import { newKey } from "./api-helpers";
import { chat, eventually, recorded, uniqueModel } from "./helpers";

/** COLO_CACHE_TTL_MS of the test Worker (vitest.config.ts): the staleness bound a refresh is measured against. */
export const COLO_TTL_MS = Number((env as unknown as Record<string, string>).COLO_CACHE_TTL_MS);

/** This isolate's answer memory. */
export const hot = () => isolate(configOf(env)).hot;

/** A recorded path: its credential, body, the key (h_n) its answers live at, the shard that holds them, and the answers. */
export interface RecordedPath {
  key: string;
  body: unknown;
  parent: string;
  db: D1Database;
  answers: StoredAnswer[];
}

/**
 * Records a one-message conversation and reads it back once it has settled:
 * the miss's recording forgets the key in this isolate after the response,
 * so this waits for that forget, then past it, then hits once more (a cold
 * read that fills memory), so that the entries a test sets next are neither
 * deleted by that forget nor refused as read before it. `dbs` are where the
 * node may live (one shard, or every shard of the sharded project).
 */
export async function recordedPath(prefix: string, dbs: D1Database[] = [env.DB]): Promise<RecordedPath> {
  const key = newKey();
  const body = { model: uniqueModel(prefix), messages: [{ role: "user", content: `${prefix} ${crypto.randomUUID()}` }] };
  await (await chat(body, { key })).arrayBuffer();
  await recorded(body, { key });
  const hit = await chat(body, { key });
  const node = hit.headers.get("muscle-mem-node")!;
  await hit.arrayBuffer();
  for (const db of dbs) {
    const row = await db.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).first<{ parent: string }>();
    if (!row) continue;
    await eventually(() => hot().staleRead(row.parent, 0), 5_000);
    await new Promise((r) => setTimeout(r, COLO_TTL_MS));
    await (await chat(body, { key })).arrayBuffer();
    const answers = hot().get(row.parent);
    if (!answers) throw new Error("the hit left nothing in the isolate's memory");
    return { key, body, parent: row.parent, db, answers };
  }
  throw new Error(`no database holds node ${node}`);
}
