import { env } from "cloudflare:workers";
import type { StoredAnswer } from "../../src/core/answer";
import { configOf } from "../../src/config";
import { isolate } from "../../src/engine/isolate";
import { readAnswers } from "../../src/store/tree/answers";
import { newKey } from "./api-helpers";
import { chat, eventually, recorded, uniqueModel } from "./helpers";

/** COLO_CACHE_TTL_MS of the test Worker (vitest.config.ts): the staleness bound a refresh is measured against. */
export const COLO_TTL_MS = Number((env as unknown as Record<string, string>).COLO_CACHE_TTL_MS);

/** This isolate's answer memory. */
export const hot = () => isolate(configOf(env)).hot;

/** How long an entry a test puts in memory stays there: long enough that no stalled machine lets it lapse before the hit that reads it, and within the minute a forget is remembered (src/engine/lookup/isolate-cache.ts). */
const KEPT_MS = 30_000;

/**
 * Puts `answers` in this isolate's memory as read from the store 90% of the
 * bound ago, so that the next hit of `parent` is due for a refresh; returns
 * that read time. The entry is kept as of KEPT_MS from now (its deadline is
 * that plus HOT_CACHE_TTL_MS), not for the last tenth of the bound: what is
 * under test is what a due hit does, and a busy machine that took longer
 * than the rest of the bound to send the hit would otherwise read it cold.
 * A refresh replaces it with an entry of its own.
 */
export function keepDue(parent: string, answers: StoredAnswer[]): number {
  const readAt = Date.now() - Math.round(COLO_TTL_MS * 0.9);
  hot().set(parent, answers, Date.now() + KEPT_MS, Infinity, readAt);
  return readAt;
}

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
 * deleted by that forget nor refused as read before it. The answers are read
 * from the store, not from memory (which a stalled machine may have let lapse
 * by then). `dbs` are where the node may live (one shard, or every shard of
 * the sharded project).
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
    const answers = await readAnswers(db, row.parent);
    if (answers.length === 0) throw new Error(`no answers at ${row.parent}`);
    return { key, body, parent: row.parent, db, answers };
  }
  throw new Error(`no database holds node ${node}`);
}
