import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import type { StoredAnswer } from "../../core/answer";
import { servedAnswers, type AnswerRow } from "./answers";
import { nodes, trees } from "./schema";
import type { RecordInput } from "../../core/recording";

export type { PathNode, RecordInput, RecordTarget } from "../../core/recording";
export { recordInputOf } from "../../core/recording";

export interface RecordOutcome {
  nodesInserted: number;
  answerIsNew: boolean;
}

/** A recording's outcome and, when asked for (`readBack`), the answers at that key as its batch left them. */
export type Recorded = RecordOutcome & { answers?: StoredAnswer[] };

/**
 * The exact lookup's answers query (ANSWERS_SQL in src/store/tree/answers.ts) as a
 * batch item: read in the recording's own batch, it sees the rows the batch
 * wrote, and costs no D1 call of its own.
 */
function answersAt(orm: DrizzleD1Database, parent: string) {
  return orm
    .select({ hash: nodes.hash, message: nodes.message, observations: nodes.observations, finishReason: nodes.finishReason, promptTokens: nodes.promptTokens, completionTokens: nodes.completionTokens, latencyMs: nodes.latencyMs })
    .from(nodes)
    .where(and(eq(nodes.parent, parent), eq(nodes.role, "assistant")))
    .orderBy(asc(nodes.hash));
}


/** D1 allows 100 bound parameters per statement. */
const IN_CHUNK = 90;

/**
 * Path nodes per INSERT: drizzle binds 12 of a node's 14 columns (the two
 * nullable ones are literals), and 8 x 12 = 96 stays under D1's 100.
 */
export const ROWS_PER_INSERT = 8;

/**
 * Finds which of the given hashes already exist. Because a node is only ever
 * stored with all its ancestors, and pruning removes whole subtrees, the
 * search walks back from the deepest hash and stops at the first chunk that
 * has any: everything above it exists.
 */
async function existingHashes(db: D1Database, hashes: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const orm = drizzle(db);
  for (let end = hashes.length; end > 0; end -= IN_CHUNK) {
    const chunk = hashes.slice(Math.max(0, end - IN_CHUNK), end);
    const rows = await orm.select({ hash: nodes.hash }).from(nodes).where(inArray(nodes.hash, chunk));
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
export async function recordGenerations(db: D1Database, inputs: readonly RecordInput[], now = Date.now(), readBack: ReadonlyArray<string | undefined> = []): Promise<Recorded[]> {
  const orm = drizzle(db);
  const known = new Set<string>();
  const statements: RecordStatement[] = [];
  const outcomes: Recorded[] = [];
  for (const input of inputs) {
    const hashes = [...input.path.map((p) => p.hash), input.answer.hash];
    const fresh = hashes.filter((h) => !known.has(h));
    const existing = new Set([...known, ...(await existingHashes(db, fresh))]);
    const recorded = recordStatements(orm, input, existing, now);
    statements.push(...recorded.statements);
    outcomes.push(recorded.outcome);
    for (const h of hashes) known.add(h);
  }
  const reads = inputs.flatMap((_, i) => {
    const key = readBack[i];
    return key === undefined ? [] : [{ i, query: answersAt(orm, key) }];
  });
  const [first, ...rest] = statements;
  if (!first) return outcomes;
  const results = await orm.batch([first, ...rest, ...reads.map((r) => r.query)]);
  // SAFETY: the batch's last results are the reads, in order; each is answersAt's rows.
  reads.forEach((r, j) => (outcomes[r.i] = { ...outcomes[r.i], answers: servedAnswers(results[statements.length + j] as AnswerRow[]) }));
  return outcomes;
}

/** A statement of a recording: a batch item whose SQL and parameters can be inspected. */
type RecordStatement = BatchItem<"sqlite"> & { toSQL(): { sql: string; params: unknown[] } };

/** The statements of one recording, given the hashes that already exist (one atomic batch). */
export function recordStatements(
  orm: DrizzleD1Database,
  input: RecordInput,
  existing: ReadonlySet<string>,
  now: number,
): { statements: [RecordStatement, ...RecordStatement[]]; outcome: RecordOutcome } {
  const missing = input.path.map((p, i) => ({ ...p, depth: i + 1 })).filter((p) => !existing.has(p.hash));
  const answerIsNew = !existing.has(input.answer.hash);
  const inserted = missing.length + (answerIsNew ? 1 : 0);

  const statements: [RecordStatement, ...RecordStatement[]] = [
    orm
      .insert(trees)
      .values({ id: input.treeId, tenant: input.tenant, namespace: input.namespace, model: input.model, frame: input.frameJson, createdAt: now })
      .onConflictDoNothing(),
  ];
  // Several rows per statement: a long first conversation stays far below D1's queries per invocation.
  for (let i = 0; i < missing.length; i += ROWS_PER_INSERT) {
    const rows = missing.slice(i, i + ROWS_PER_INSERT).map((node) => ({
      hash: node.hash,
      parent: node.parent,
      treeId: input.treeId,
      depth: node.depth,
      role: node.role,
      message: node.json,
      createdAt: now,
    }));
    statements.push(orm.insert(nodes).values(rows).onConflictDoNothing());
  }
  const a = input.answer;
  statements.push(
    orm
      .insert(nodes)
      .values({
        hash: a.hash,
        parent: a.parent,
        treeId: input.treeId,
        depth: input.path.length + 1,
        role: a.role,
        message: a.json,
        observations: 1,
        finishReason: a.finishReason,
        promptTokens: a.promptTokens,
        completionTokens: a.completionTokens,
        latencyMs: a.latencyMs,
        createdAt: now,
      })
      .onConflictDoUpdate({
        target: nodes.hash,
        set: {
          // A node first written as a later request's history (the client's echo of this answer, which may spell
          // it otherwise: content null for "") takes the model's own message with its first observation.
          message: sql`CASE WHEN ${nodes.observations} = 0 THEN excluded.message ELSE ${nodes.message} END`,
          observations: sql`${nodes.observations} + 1`,
          finishReason: a.finishReason,
          promptTokens: a.promptTokens,
          completionTokens: a.completionTokens,
          latencyMs: a.latencyMs,
        },
      }),
  );
  statements.push(
    orm
      .update(trees)
      .set({ misses: sql`${trees.misses} + 1`, nodeCount: sql`${trees.nodeCount} + ${inserted}` })
      .where(sql`${trees.id} = ${input.treeId}`),
  );
  return { statements, outcome: { nodesInserted: inserted, answerIsNew } };
}
