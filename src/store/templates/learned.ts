import type { LearnedTemplate } from "../../cache/templates/induce";
import type { NodeMeta } from "../../cache/templates/turns";
import type { NodeRecord, TemplateRecord } from "../tree/schema";
import { soundTemplates, type TemplateRowRead } from "./template-row";

/** D1 allows 100 bound parameters per statement. */
const IN_CHUNK = 90;

const TEMPLATE_COLUMNS = "id, tree_id, lookup_key, pattern, state";

/**
 * The live templates under any of `keys` (at most 64: one per anchor), deepest
 * anchor first, at most `limit`. One indexed query (templates_lookup_idx).
 * Throws when one of them is damaged (its JSON not what learning writes,
 * template-row.ts): it might have rendered another answer than the others, so
 * the lookup misses (the caller fails open to the model); never a serve beside it.
 */
export async function readTemplates(db: D1Database, keys: readonly string[], limit: number): Promise<LearnedTemplate[]> {
  if (keys.length === 0) return [];
  const rows = (await templatesStatement(db, keys, limit).all<TemplateRowRead>()).results;
  const templates = soundTemplates(rows);
  if (templates.length < rows.length) throw new Error(`${rows.length - templates.length} damaged template row(s) under the lookup keys`);
  return templates;
}

/** readTemplates's query: live templates whose lookup key is one of `keys` (the first IN_CHUNK), deepest anchor and most bindings first. */
function templatesStatement(db: D1Database, keys: readonly string[], limit: number): D1PreparedStatement {
  const chunk = keys.slice(0, IN_CHUNK);
  const slots = chunk.map((_, i) => `?${i + 1}`).join(", ");
  return db
    .prepare(
      `SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE lookup_key IN (${slots}) AND refuted = 0 ORDER BY anchor_depth DESC, bindings DESC LIMIT ?${chunk.length + 1}`,
    )
    .bind(...chunk, limit);
}

/** A partner of a new answer: a recent other answer of its shape class, with its path (null when pruned). */
export interface Partner {
  hash: string;
  path: PathTo | null;
}

/** What learning reads for one recording (readLearning). */
export interface LearningRead {
  templates: LearnedTemplate[];
  partners: Partner[];
  own: PathTo | null;
}

/**
 * readLearning's statements for one recording: the live templates under `keys` (none without keys), its own
 * path, its partners and their paths; `learningOf` reads their results. A batch of recordings puts every
 * recording's statements in one D1 call (learn-batch.ts).
 */
export function learningStatements(
  db: D1Database,
  keys: readonly string[],
  limit: number,
  shape: { shapeKey: string; answerHash: string; limit: number },
): D1PreparedStatement[] {
  const shapeParams = [shape.shapeKey, shape.answerHash, shape.limit];
  return [
    ...(keys.length > 0 ? [templatesStatement(db, keys, limit)] : []),
    db.prepare(PATH_SQL).bind(shape.answerHash),
    db.prepare(PARTNERS_SQL).bind(...shapeParams),
    db.prepare(PARTNER_PATHS_SQL).bind(...shapeParams),
  ];
}

/** What learningStatements' results say (`results`: theirs, in order; `answerHash`: the recording's answer). */
export function learningOf(results: ReadonlyArray<D1Result<Record<string, unknown>>>, answerHash: string): LearningRead {
  // SAFETY: each result's rows are its statement's columns: templatesStatement's (when there), PATH_SQL's, PARTNERS_SQL's, PARTNER_PATHS_SQL's.
  const [ownRows, partnerRows, chainRows] = results.slice(-3).map((r) => r.results) as [
    ChainRow[],
    Array<{ hash: string }>,
    Array<ChainRow & { origin: string }>,
  ];
  const templateRows = (results.length === 4 ? results[0].results : []) as TemplateRowRead[];
  return {
    // A damaged template (logged) is not learned from: it cannot serve (readTemplates misses beside it), and
    // reading it would fail every recording's learning under its keys for good.
    templates: soundTemplates(templateRows),
    partners: partnerRows.map(({ hash }) => ({
      hash,
      path: pathOf(
        chainRows.filter((r) => r.origin === hash),
        hash,
      ),
    })),
    own: pathOf(ownRows, answerHash),
  };
}

/**
 * Everything learning reads, in one D1 call (a batch): the live templates
 * under `keys` (readTemplates), the new answer's own path with what each node
 * is (`own`: which earlier messages are recorded answers), the most recent other answers of the new
 * answer's shape class (partnersOf) and their paths (readPathTo). The
 * partners are read even when a template will confirm the answer and they go
 * unused: one batch costs less than a second call.
 */
export async function readLearning(
  db: D1Database,
  keys: readonly string[],
  limit: number,
  shape: { shapeKey: string; answerHash: string; limit: number },
): Promise<LearningRead> {
  return learningOf(await db.batch<Record<string, unknown>>(learningStatements(db, keys, limit, shape)), shape.answerHash);
}

/** Whether the tree has any template that is not refuted: one indexed probe (templates_tree_idx). */
export async function hasLiveTemplates(db: D1Database, treeId: string): Promise<boolean> {
  return (await liveTemplatesStatement(db, treeId).all()).results.length > 0;
}

/** A live template of a tree (?1): not refuted, and learned (declared ones have a negative anchor depth). */
const LIVE_TEMPLATES_SQL = `SELECT id FROM templates WHERE tree_id = ?1 AND refuted = 0 AND anchor_depth >= 0 LIMIT 1`;

/** hasLiveTemplates's probe as a statement, to run in a D1 batch with others: the tree has live templates when its result has a row. */
export function liveTemplatesStatement(db: D1Database, treeId: string): D1PreparedStatement {
  return db.prepare(LIVE_TEMPLATES_SQL).bind(treeId);
}

/** The most recent other answers of a shape class, at most `limit`. */
export async function partnersOf(db: D1Database, shapeKey: string, answerHash: string, limit: number): Promise<string[]> {
  return (await db.prepare(PARTNERS_SQL).bind(shapeKey, answerHash, limit).all<{ hash: string }>()).results.map((r) => r.hash);
}

/** A recorded answer with its whole path (readPathTo). */
export interface PathTo {
  path: Array<{ hash: string; parent: string; message: string; meta: NodeMeta }>;
  answer: { message: string; finishReason: string | null; promptTokens: number; completionTokens: number; latencyMs: number };
}

/** A row of PATH_SQL's chain (its columns, as nodes holds them). */
type ChainRow = Pick<
  NodeRecord,
  "hash" | "parent" | "message" | "depth" | "finish_reason" | "prompt_tokens" | "completion_tokens" | "latency_ms" | "observations"
>;

/** The path to one answer (?1), root first, in one recursive query. */
const PATH_SQL = `
    WITH RECURSIVE chain(hash, parent, message, depth, finish_reason, prompt_tokens, completion_tokens, latency_ms, observations) AS (
      SELECT hash, parent, message, depth, finish_reason, prompt_tokens, completion_tokens, latency_ms, observations FROM nodes WHERE hash = ?1
      UNION ALL
      SELECT n.hash, n.parent, n.message, n.depth, n.finish_reason, n.prompt_tokens, n.completion_tokens, n.latency_ms, n.observations FROM nodes n JOIN chain c ON n.hash = c.parent
    )
    SELECT * FROM chain ORDER BY depth`;

/** A recorded answer with its whole path, read in one recursive query; null when any node is gone (pruned). */
export async function readPathTo(db: D1Database, answerHash: string): Promise<PathTo | null> {
  return pathOf((await db.prepare(PATH_SQL).bind(answerHash).all<ChainRow>()).results, answerHash);
}

/** partnersOf's query: the most recent other answers (?2) of a shape class (?1), at most ?3. */
const PARTNERS_SQL = `SELECT answer_hash AS hash FROM template_observations WHERE shape_key = ?1 AND answer_hash <> ?2 ORDER BY created_at DESC LIMIT ?3`;

/** The paths to PARTNERS_SQL's answers, each row tagged with the answer it leads to (`origin`), each path root first. */
const PARTNER_PATHS_SQL = `
    WITH RECURSIVE chain(origin, hash, parent, message, depth, finish_reason, prompt_tokens, completion_tokens, latency_ms, observations) AS (
      SELECT hash, hash, parent, message, depth, finish_reason, prompt_tokens, completion_tokens, latency_ms, observations FROM nodes WHERE hash IN (${PARTNERS_SQL})
      UNION ALL
      SELECT c.origin, n.hash, n.parent, n.message, n.depth, n.finish_reason, n.prompt_tokens, n.completion_tokens, n.latency_ms, n.observations FROM nodes n JOIN chain c ON n.hash = c.parent
    )
    SELECT * FROM chain ORDER BY origin, depth`;

function pathOf(rows: ChainRow[], answerHash: string): PathTo | null {
  if (rows.length < 2) return null;
  const answer = rows[rows.length - 1];
  if (answer.hash !== answerHash || answer.observations < 1 || rows.some((r, i) => r.depth !== i + 1)) return null;
  return {
    path: rows.slice(0, -1).map((r) => ({
      hash: r.hash,
      parent: r.parent,
      message: r.message,
      meta: {
        finishReason: r.finish_reason,
        observations: r.observations,
        promptTokens: r.prompt_tokens,
        completionTokens: r.completion_tokens,
        latencyMs: r.latency_ms,
      },
    })),
    answer: {
      message: answer.message,
      finishReason: answer.finish_reason,
      promptTokens: answer.prompt_tokens,
      completionTokens: answer.completion_tokens,
      latencyMs: answer.latency_ms,
    },
  };
}

/** How often each of a tree's templates has served (template id -> hits). */
export async function templateHits(db: D1Database, treeId: string): Promise<Map<string, number>> {
  const { results } = await db.prepare("SELECT id, hits FROM templates WHERE tree_id = ?1").bind(treeId).all<Pick<TemplateRecord, "id" | "hits">>();
  return new Map(results.map((r) => [r.id, r.hits]));
}

/** Lists a tree's templates for the trajectory API and the dashboard. */
export async function listTemplates(db: D1Database, treeId: string, limit = 100): Promise<LearnedTemplate[]> {
  const { results } = await db
    .prepare(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE tree_id = ?1 AND anchor_depth >= 0 ORDER BY updated_at DESC LIMIT ?2`)
    .bind(treeId, limit)
    .all<TemplateRowRead>();
  // A damaged template (logged) is left out of the list; the tree's others are listed.
  return soundTemplates(results);
}
