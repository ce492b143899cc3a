import type { StoredAnswer } from "../../core/answer";
import type { RecordInput } from "../../core/recording";
import { answersFrom, answersStatement, type AnswerRow } from "./answers";

export type { PathNode, RecordInput, RecordTarget } from "../../core/recording";
export { recordInputOf } from "../../core/recording";

export interface RecordOutcome {
  nodesInserted: number;
  answerIsNew: boolean;
}

/** A recording's outcome and, when asked for (`readBack`), the answers at that key as its batch left them. */
export type Recorded = RecordOutcome & { answers?: StoredAnswer[] };

/** One SQL statement of a recording and its bound values, prepared when the batch runs (and inspectable before). */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

/** D1 allows 100 bound parameters per statement. */
const IN_CHUNK = 90;

/** Path nodes per INSERT: a path node binds 7 columns, and 8 x 7 = 56 stays well under D1's 100. */
export const ROWS_PER_INSERT = 8;

/**
 * Finds which of the given hashes already exist. Because a node is only ever
 * stored with all its ancestors, and pruning removes whole subtrees, the
 * search walks back from the deepest hash and stops at the first chunk that
 * has any: everything above it exists.
 */
async function existingHashes(db: D1Database, hashes: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let end = hashes.length; end > 0; end -= IN_CHUNK) {
    const chunk = hashes.slice(Math.max(0, end - IN_CHUNK), end);
    const { results: rows } = await db
      .prepare(`SELECT hash FROM nodes WHERE hash IN (${chunk.map((_, i) => `?${i + 1}`).join(", ")})`)
      .bind(...chunk)
      .all<{ hash: string }>();
    for (const row of rows) found.add(row.hash);
    if (rows.length > 0) {
      const deepest = Math.max(...rows.map((r) => hashes.indexOf(r.hash)));
      for (let i = 0; i <= deepest; i++) found.add(hashes[i]);
      break;
    }
  }
  return found;
}

/**
 * Records one generation in one atomic D1 batch: the tree row if new, the
 * missing path nodes, the answer (or one more observation of it) and the
 * counters. Idempotent for the path; each call is one observation. With
 * `readBack` (a path hash), the batch ends by reading the answers there.
 */
export async function recordGeneration(db: D1Database, input: RecordInput, now = Date.now(), readBack?: string): Promise<Recorded> {
  return (await recordGenerations(db, [input], now, [readBack]))[0];
}

/**
 * Records several generations of one tree in one atomic D1 batch (what the
 * tree's object had queued while it was writing). Each is one observation, as
 * if recorded one after the other: a node an earlier one of the group inserts
 * exists for the later ones, so counts are not doubled. `readBack[i]`, when
 * given, is a path hash whose answers the batch reads after its writes
 * (`answers` of the i-th outcome): what the serving policy would now serve.
 */
export async function recordGenerations(
  db: D1Database,
  inputs: readonly RecordInput[],
  now = Date.now(),
  readBack: ReadonlyArray<string | undefined> = [],
): Promise<Recorded[]> {
  const known = new Set<string>();
  const statements: SqlStatement[] = [];
  const outcomes: Recorded[] = [];
  for (const input of inputs) {
    const hashes = [...input.path.map((p) => p.hash), input.answer.hash];
    const fresh = hashes.filter((h) => !known.has(h));
    const existing = new Set([...known, ...(await existingHashes(db, fresh))]);
    const recorded = recordStatements(input, existing, now);
    statements.push(...recorded.statements);
    outcomes.push(recorded.outcome);
    for (const h of hashes) known.add(h);
  }
  const reads = inputs.flatMap((_, i) => {
    const key = readBack[i];
    // Read in the recording's own batch, the exact lookup's query sees the rows the batch wrote and costs no D1 call of its own.
    return key === undefined ? [] : [{ i, query: answersStatement(db, key) }];
  });
  if (statements.length === 0) return outcomes;
  const prepared = statements.map((st) => db.prepare(st.sql).bind(...st.params));
  const results = await db.batch<AnswerRow>([...prepared, ...reads.map((r) => r.query)]);
  // The batch's last results are the reads, in order.
  reads.forEach((r, j) => (outcomes[r.i] = { ...outcomes[r.i], answers: answersFrom(results[statements.length + j]) }));
  return outcomes;
}

/** The statements of one recording, given the hashes that already exist (one atomic batch). */
export function recordStatements(
  input: RecordInput,
  existing: ReadonlySet<string>,
  now: number,
): { statements: [SqlStatement, ...SqlStatement[]]; outcome: RecordOutcome } {
  const missing = input.path.map((p, i) => ({ ...p, depth: i + 1 })).filter((p) => !existing.has(p.hash));
  const answerIsNew = !existing.has(input.answer.hash);
  const inserted = missing.length + (answerIsNew ? 1 : 0);

  const statements: [SqlStatement, ...SqlStatement[]] = [
    {
      sql: "INSERT INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
      params: [input.treeId, input.tenant, input.namespace, input.model, input.frameJson, now],
    },
  ];
  // Several rows per statement: a long first conversation stays far below D1's queries per invocation.
  for (let i = 0; i < missing.length; i += ROWS_PER_INSERT) {
    const rows = missing.slice(i, i + ROWS_PER_INSERT);
    const values = rows.map((_, r) => `(${Array.from({ length: 7 }, (_, c) => `?${r * 7 + c + 1}`).join(", ")})`).join(", ");
    statements.push({
      sql: `INSERT INTO nodes (hash, parent, tree_id, depth, role, message, created_at) VALUES ${values} ON CONFLICT DO NOTHING`,
      params: rows.flatMap((node) => [node.hash, node.parent, input.treeId, node.depth, node.role, node.json, now]),
    });
  }
  const a = input.answer;
  statements.push({
    // A node first written as a later request's history (the client's echo of this answer, which may spell
    // it otherwise: content null for "") takes the model's own message with its first observation. A damaged
    // row (its message not a JSON object, which the lookup skips: answers.ts) takes it too, so the node serves again.
    sql: `INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations, finish_reason, prompt_tokens, completion_tokens, latency_ms, created_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?9, ?10, ?11)
      ON CONFLICT (hash) DO UPDATE SET
        message = CASE WHEN nodes.observations = 0 OR json_type(CASE WHEN json_valid(nodes.message) THEN nodes.message END) IS NOT 'object'
          THEN excluded.message ELSE nodes.message END,
        observations = nodes.observations + 1,
        finish_reason = excluded.finish_reason,
        prompt_tokens = excluded.prompt_tokens,
        completion_tokens = excluded.completion_tokens,
        latency_ms = excluded.latency_ms`,
    params: [a.hash, a.parent, input.treeId, input.path.length + 1, a.role, a.json, a.finishReason, a.promptTokens, a.completionTokens, a.latencyMs, now],
  });
  if (input.upstream !== undefined) {
    // A later observation of the same id (a retried record) names the same answer: the first row stands.
    statements.push({
      sql: "INSERT INTO upstream_responses (tenant, upstream_id, tree_id, answer_hash, call_ids, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
      params: [input.tenant, input.upstream.id, input.treeId, a.hash, JSON.stringify(input.upstream.callIds), now],
    });
  }
  statements.push({
    sql: "UPDATE trees SET misses = misses + 1, node_count = node_count + ?2 WHERE id = ?1",
    params: [input.treeId, inserted],
  });
  return { statements, outcome: { nodesInserted: inserted, answerIsNew } };
}
