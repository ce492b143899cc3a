import type { StoredAnswer } from "../../core/answer";
import type { CanonicalMessage } from "../../core/messages";
import type { NodeRow } from "./schema";
import { logEvent } from "../../observability/log-event";

/** Converts a node row into the answer the proxy serves. */
export function answerOf(
  row: Pick<NodeRow, "hash" | "message" | "observations" | "finishReason" | "promptTokens" | "completionTokens" | "latencyMs">,
): StoredAnswer {
  return {
    hash: row.hash,
    message: JSON.parse(row.message) as CanonicalMessage,
    observations: row.observations,
    finishReason: row.finishReason ?? "stop",
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    latencyMs: row.latencyMs,
  };
}

/** The columns of an answer row (AnswerRow), as the answer queries select them. */
const ANSWER_COLUMNS = `hash, message, observations, finish_reason AS finishReason, prompt_tokens AS promptTokens,
  completion_tokens AS completionTokens, latency_ms AS latencyMs`;

/** The exact lookup's one query (its plan is checked in test/worker/store.test.ts). */
export const ANSWERS_SQL = `SELECT ${ANSWER_COLUMNS}
  FROM nodes WHERE parent = ?1 AND role = 'assistant' ORDER BY hash`;

export type AnswerRow = Pick<NodeRow, "hash" | "message" | "observations" | "finishReason" | "promptTokens" | "completionTokens" | "latencyMs">;

/** What one answers query returned, and whether D1 says the primary served it (read replication). */
export interface AnswersRead {
  answers: StoredAnswer[];
  /** `meta.served_by_primary`; undefined when the runtime does not say. */
  servedByPrimary: boolean | undefined;
}

/** The answers query at `parent` as a statement, to run in a D1 batch with others (read its result with answersFrom). */
export function answersStatement(db: D1Database, parent: string): D1PreparedStatement {
  return db.prepare(ANSWERS_SQL).bind(parent);
}

/**
 * The answers among rows of the answers query (a recorded node with no
 * observation left is not an answer). A damaged row (its message not a JSON
 * object, its counts not numbers) is skipped with one `stored_answer_damaged`
 * log line: it is never served, and the other answers at the node still are.
 */
export function servedAnswers(rows: readonly AnswerRow[]): StoredAnswer[] {
  const out: StoredAnswer[] = [];
  for (const row of rows) {
    if (!(row.observations > 0)) continue;
    const answer = soundAnswerOf(row);
    if (answer) out.push(answer);
    else logEvent("error", "stored_answer_damaged", { node: row.hash });
  }
  return out;
}

/** answerOf when the row is sound: a message that parses to a JSON object, whole-number counts; null otherwise. */
function soundAnswerOf(row: AnswerRow): StoredAnswer | null {
  if (typeof row.message !== "string" || typeof row.hash !== "string" || !counts(row)) return null;
  let message: unknown;
  try {
    message = JSON.parse(row.message);
  } catch {
    return null;
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) return null;
  return {
    hash: row.hash,
    message: message as CanonicalMessage,
    observations: row.observations,
    finishReason: typeof row.finishReason === "string" ? row.finishReason : "stop",
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    latencyMs: row.latencyMs,
  };
}

/** Whether a row's token counts, which a hit serves as its usage, are whole numbers. */
function counts(row: AnswerRow): boolean {
  const whole = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  return whole(row.promptTokens) && whole(row.completionTokens);
}

/** The answers in the result of answersStatement. */
export function answersFrom(result: D1Result<AnswerRow>): StoredAnswer[] {
  return servedAnswers(result.results);
}

/**
 * The recorded answers at h_n: the assistant children of one node. One indexed
 * query (nodes_parent_idx), whatever the depth of the conversation or the size
 * of the tree. Takes a database or a read-replica session.
 */
export async function queryAnswers(db: D1Database | D1DatabaseSession, parent: string): Promise<AnswersRead> {
  const result = await db.prepare(ANSWERS_SQL).bind(parent).all<AnswerRow>();
  return { answers: answersFrom(result), servedByPrimary: result.meta.served_by_primary };
}

/** Keys per statement of readAnswersAt: D1 binds at most 100 parameters to one statement. */
export const KEYS_PER_STATEMENT = 90;

function manyAnswersSql(count: number): string {
  const params = Array.from({ length: count }, (_, i) => `?${i + 1}`).join(", ");
  return `SELECT parent, ${ANSWER_COLUMNS}
  FROM nodes WHERE parent IN (${params}) AND role = 'assistant' ORDER BY parent, hash`;
}

/**
 * The recorded answers at each of `keys` (h_n of several paths), in one D1
 * call: a statement per KEYS_PER_STATEMENT keys, each an indexed IN lookup
 * (nodes_parent_idx), run as one batch. A key with no answer maps to [].
 */
export async function readAnswersAt(db: D1Database, keys: readonly string[]): Promise<Map<string, StoredAnswer[]>> {
  const out = new Map<string, StoredAnswer[]>(keys.map((key) => [key, []]));
  if (keys.length === 0) return out;
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
    const chunk = keys.slice(i, i + KEYS_PER_STATEMENT);
    statements.push(db.prepare(manyAnswersSql(chunk.length)).bind(...chunk));
  }
  const rowsByParent = new Map<string, AnswerRow[]>();
  for (const result of await db.batch<AnswerRow & { parent: string }>(statements)) {
    for (const row of result.results) {
      const rows = rowsByParent.get(row.parent) ?? [];
      rows.push(row);
      rowsByParent.set(row.parent, rows);
    }
  }
  for (const [parent, rows] of rowsByParent) if (out.has(parent)) out.set(parent, servedAnswers(rows));
  return out;
}

/** The recorded answers at h_n (see queryAnswers). */
export async function readAnswers(db: D1Database | D1DatabaseSession, parent: string): Promise<StoredAnswer[]> {
  return (await queryAnswers(db, parent)).answers;
}
