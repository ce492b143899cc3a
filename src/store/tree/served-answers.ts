import { z } from "zod";
import type { ServedAnswer } from "../../cache/provider";

/**
 * Learned templates' answers served on Responses to requests that may chain on them (table `served_answers`,
 * src/store/tree/schema.ts): written before the answer is served, read when a `previous_response_id` names
 * one (src/providers/responses/resolve.ts), deleted with the tree (drain) and by its stale prune.
 */

/** Rows one page of the stale prune deletes at most. */
const PRUNE_PAGE = 100;

const tail = z.array(z.object({ hash: z.string(), message: z.string() }));

/** Keeps `row` for `tenant` (the same answer served again: refreshed, so its age counts from the last serve). Throws when D1 does. */
export async function keepServedAnswer(db: D1Database, tenant: string, row: ServedAnswer, now = Date.now()): Promise<void> {
  await db
    .prepare(
      `INSERT INTO served_answers (tenant, tree_id, answer_hash, parent, base, tail, answer, links, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
       ON CONFLICT DO UPDATE SET created_at = excluded.created_at`,
    )
    .bind(tenant, row.treeId, row.answerHash, row.parent, row.base, JSON.stringify(row.tail), row.answer, row.links, now)
    .run();
}

/** The answer `tenant` was served and kept in `treeId` under `answerHash`; null when there is none, or its row does not read. */
export async function servedAnswerOf(db: D1Database, tenant: string, treeId: string, answerHash: string): Promise<ServedAnswer | null> {
  const row = await db
    .prepare(`SELECT parent, base, tail, answer, links FROM served_answers WHERE tenant = ?1 AND tree_id = ?2 AND answer_hash = ?3`)
    .bind(tenant, treeId, answerHash)
    .first<{ parent: string; base: string; tail: string; answer: string; links: number }>();
  if (!row) return null;
  const steps = tail.safeParse(JSON.parse(row.tail));
  if (!steps.success) return null;
  return { treeId, answerHash, parent: row.parent, base: row.base, tail: steps.data, answer: row.answer, links: row.links };
}

/** Deletes a tree's kept answers served before `cutoff`, a page per call of `write`; the number deleted. */
export async function pruneServedAnswers(write: <T>(page: (db: D1Database) => Promise<T>) => Promise<T>, treeId: string, cutoff: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const changes = await write(async (db) => {
      const run = await db
        .prepare(`DELETE FROM served_answers WHERE rowid IN (SELECT rowid FROM served_answers WHERE tree_id = ?1 AND created_at < ?2 LIMIT ${PRUNE_PAGE})`)
        .bind(treeId, cutoff)
        .run();
      return run.meta.changes ?? 0;
    });
    deleted += changes;
    if (changes < PRUNE_PAGE) return deleted;
  }
}
