import { and, desc, eq, gte, inArray, ne, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { LearnedTemplate } from "../cache/templates/induce";
import type { TemplatePattern, TemplateState } from "../cache/templates/learned";
import { templateEvidence, templateObservations, templates } from "./schema";

/** D1 allows 100 bound parameters per statement. */
const IN_CHUNK = 90;

function toTemplate(row: { id: string; treeId: string; lookupKey: string; pattern: string; state: string }): LearnedTemplate {
  return { id: row.id, treeId: row.treeId, lookupKey: row.lookupKey, pattern: JSON.parse(row.pattern) as TemplatePattern, state: JSON.parse(row.state) as TemplateState };
}

/**
 * The live templates under any of `keys` (at most 64: one per anchor), deepest
 * anchor first, at most `limit`. One indexed query (templates_lookup_idx).
 */
export async function readTemplates(db: D1Database, keys: readonly string[], limit: number): Promise<LearnedTemplate[]> {
  if (keys.length === 0) return [];
  const rows = await drizzle(db)
    .select({ id: templates.id, treeId: templates.treeId, lookupKey: templates.lookupKey, pattern: templates.pattern, state: templates.state })
    .from(templates)
    .where(and(inArray(templates.lookupKey, keys.slice(0, IN_CHUNK)), eq(templates.refuted, 0)))
    .orderBy(desc(templates.anchorDepth), desc(templates.bindings))
    .limit(limit);
  return rows.map(toTemplate);
}

/** Whether the tree has any template that is not refuted: one indexed probe (templates_tree_idx). */
export async function hasLiveTemplates(db: D1Database, treeId: string): Promise<boolean> {
  const rows = await drizzle(db)
    .select({ id: templates.id })
    .from(templates)
    .where(and(eq(templates.treeId, treeId), eq(templates.refuted, 0), gte(templates.anchorDepth, 0)))
    .limit(1);
  return rows.length > 0;
}

/** A recorded answer that induced or confirmed a template (what a prune of that answer takes along). */
export interface Evidence {
  templateId: string;
  answerHash: string;
}

/** Inserts new templates, stores new states of known ones and their new evidence, in one batch. */
export async function saveTemplates(db: D1Database, fresh: readonly LearnedTemplate[], updated: readonly LearnedTemplate[], now = Date.now(), evidence: readonly Evidence[] = []): Promise<void> {
  const orm = drizzle(db);
  const statements = [
    ...fresh.map((t) =>
      orm
        .insert(templates)
        .values({ id: t.id, treeId: t.treeId, lookupKey: t.lookupKey, anchorDepth: t.pattern.anchorDepth, pattern: JSON.stringify(t.pattern), state: JSON.stringify(t.state), bindings: t.state.bindings.length, refuted: t.state.refuted ? 1 : 0, createdAt: now, updatedAt: now })
        .onConflictDoNothing(),
    ),
    ...updated.map((t) =>
      orm
        .update(templates)
        .set({ state: JSON.stringify(t.state), bindings: t.state.bindings.length, refuted: t.state.refuted ? 1 : 0, updatedAt: now })
        .where(eq(templates.id, t.id)),
    ),
    ...evidence.map((e) => {
      const treeId = [...fresh, ...updated].find((t) => t.id === e.templateId)?.treeId ?? "";
      return orm.insert(templateEvidence).values({ templateId: e.templateId, answerHash: e.answerHash, treeId, createdAt: now }).onConflictDoNothing();
    }),
  ];
  if (statements.length === 0) return;
  await orm.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]]);
}

/** Remembers an answer as a future partner for its shape class (idempotent). */
export async function observe(db: D1Database, treeId: string, shapeKey: string, answerHash: string, now = Date.now()): Promise<void> {
  await drizzle(db).insert(templateObservations).values({ answerHash, treeId, shapeKey, createdAt: now }).onConflictDoNothing();
}

/** The most recent other answers of a shape class, at most `limit`. */
export async function partnersOf(db: D1Database, shapeKey: string, answerHash: string, limit: number): Promise<string[]> {
  const rows = await drizzle(db)
    .select({ hash: templateObservations.answerHash })
    .from(templateObservations)
    .where(and(eq(templateObservations.shapeKey, shapeKey), ne(templateObservations.answerHash, answerHash)))
    .orderBy(desc(templateObservations.createdAt))
    .limit(limit);
  return rows.map((r) => r.hash);
}

/** A recorded answer with its whole path, read in one recursive query; null when any node is gone (pruned). */
export async function readPathTo(db: D1Database, answerHash: string): Promise<{ path: Array<{ hash: string; parent: string; message: string }>; answer: { message: string; finishReason: string | null; promptTokens: number; completionTokens: number; latencyMs: number } } | null> {
  const rows = await drizzle(db).all<{ hash: string; parent: string; message: string; depth: number; finish_reason: string | null; prompt_tokens: number; completion_tokens: number; latency_ms: number; observations: number }>(sql`
    WITH RECURSIVE chain(hash, parent, message, depth, finish_reason, prompt_tokens, completion_tokens, latency_ms, observations) AS (
      SELECT hash, parent, message, depth, finish_reason, prompt_tokens, completion_tokens, latency_ms, observations FROM nodes WHERE hash = ${answerHash}
      UNION ALL
      SELECT n.hash, n.parent, n.message, n.depth, n.finish_reason, n.prompt_tokens, n.completion_tokens, n.latency_ms, n.observations FROM nodes n JOIN chain c ON n.hash = c.parent
    )
    SELECT * FROM chain ORDER BY depth`);
  if (rows.length < 2) return null;
  const answer = rows[rows.length - 1];
  if (answer.hash !== answerHash || answer.observations < 1 || rows.some((r, i) => r.depth !== i + 1)) return null;
  return {
    path: rows.slice(0, -1).map((r) => ({ hash: r.hash, parent: r.parent, message: r.message })),
    answer: { message: answer.message, finishReason: answer.finish_reason, promptTokens: answer.prompt_tokens, completionTokens: answer.completion_tokens, latencyMs: answer.latency_ms },
  };
}

/** How often each of a tree's templates has served (template id -> hits). */
export async function templateHits(db: D1Database, treeId: string): Promise<Map<string, number>> {
  const rows = await drizzle(db).select({ id: templates.id, hits: templates.hits }).from(templates).where(eq(templates.treeId, treeId));
  return new Map(rows.map((r) => [r.id, r.hits]));
}

/** Lists a tree's templates for the trajectory API and the dashboard. */
export async function listTemplates(db: D1Database, treeId: string, limit = 100): Promise<LearnedTemplate[]> {
  const rows = await drizzle(db)
    .select({ id: templates.id, treeId: templates.treeId, lookupKey: templates.lookupKey, pattern: templates.pattern, state: templates.state })
    .from(templates)
    .where(and(eq(templates.treeId, treeId), gte(templates.anchorDepth, 0)))
    .orderBy(desc(templates.updatedAt))
    .limit(limit);
  return rows.map(toTemplate);
}
