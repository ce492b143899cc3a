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

/**
 * Keeps `row` for `tenant`. The same answer served again replaces its row and its age counts from the last serve:
 * the new row was read against what resolves now, while the old one's base may have been pruned since. Throws when D1 does.
 */
export async function keepServedAnswer(db: D1Database, tenant: string, row: ServedAnswer, now = Date.now()): Promise<void> {
  await db
    .prepare(
      `INSERT INTO served_answers (tenant, tree_id, answer_hash, parent, base, tail, answer, links, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
       ON CONFLICT DO UPDATE SET base = excluded.base, tail = excluded.tail, links = excluded.links, created_at = excluded.created_at`,
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

/** Path steps one read of knownSteps looks up at most (the deepest ones): D1's 100 bound parameters, less the tenant and tree. */
export const KNOWN_STEPS_READ = 98;

/**
 * Which of `hashes` (steps of a request's path in `treeId`, the deepest KNOWN_STEPS_READ) resolve without the
 * request: a recorded node (0 kept answers to read) or a kept answer of `tenant` (its `links` + 1). One read.
 */
export async function knownSteps(db: D1Database, tenant: string, treeId: string, hashes: readonly string[]): Promise<Map<string, number>> {
  const asked = hashes.slice(-KNOWN_STEPS_READ);
  if (asked.length === 0) return new Map();
  const list = asked.map((_, i) => `?${i + 3}`).join(", ");
  const rows = await db
    .prepare(
      `SELECT hash, 0 AS links FROM nodes WHERE hash IN (${list}) AND +tree_id = ?2
       UNION ALL SELECT answer_hash AS hash, links + 1 AS links FROM served_answers WHERE tenant = ?1 AND tree_id = ?2 AND answer_hash IN (${list})`,
    )
    .bind(tenant, treeId, ...asked)
    .all<{ hash: string; links: number }>();
  const known = new Map<string, number>();
  for (const row of rows.results) known.set(row.hash, Math.min(row.links, known.get(row.hash) ?? row.links));
  return known;
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
