import type { LearnedTemplate } from "../../cache/templates/induce";

/** A recorded answer that induced or confirmed a template (what a prune of that answer takes along). */
export interface Evidence {
  templateId: string;
  answerHash: string;
}

/** An answer to remember as a future partner for its shape class (observeStatement). */
export interface Observation {
  treeId: string;
  shapeKey: string;
  answerHash: string;
}

/** A new template's insert (kept when its id is already stored, refuted or not), stamped `now`. */
export function insertTemplateStatement(db: D1Database, t: LearnedTemplate, now: number): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO templates (id, tree_id, lookup_key, anchor_depth, pattern, state, bindings, refuted, created_at, updated_at)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) ON CONFLICT DO NOTHING`,
    )
    .bind(
      t.id,
      t.treeId,
      t.lookupKey,
      t.pattern.anchorDepth,
      JSON.stringify(t.pattern),
      JSON.stringify(t.state),
      t.state.bindings.length,
      t.state.refuted ? 1 : 0,
      now,
    );
}

/**
 * A known template's new state (`state`: its JSON, when the caller has it), stamped `now`. A refuted
 * template stays refuted: a learner that read it before another writer refuted it (engine/templates.ts,
 * an answer not stored) does not undo that.
 */
export function updateTemplateStatement(db: D1Database, t: LearnedTemplate, now: number, state = JSON.stringify(t.state)): D1PreparedStatement {
  return db
    .prepare("UPDATE templates SET state = ?2, bindings = ?3, refuted = max(refuted, ?4), updated_at = ?5 WHERE id = ?1")
    .bind(t.id, state, t.state.bindings.length, t.state.refuted ? 1 : 0, now);
}

/** One evidence row (kept when already stored). */
export function evidenceStatement(db: D1Database, e: Evidence, treeId: string, now: number): D1PreparedStatement {
  return db
    .prepare("INSERT INTO template_evidence (template_id, answer_hash, tree_id, created_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING")
    .bind(e.templateId, e.answerHash, treeId, now);
}

/** Remembers an answer as a future partner for its shape class (idempotent: a second observation keeps the first's time). */
export function observeStatement(db: D1Database, { treeId, shapeKey, answerHash }: Observation, now: number): D1PreparedStatement {
  return db
    .prepare("INSERT INTO template_observations (answer_hash, tree_id, shape_key, created_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING")
    .bind(answerHash, treeId, shapeKey, now);
}

/** The tree of an evidence row: that of the template it names among `templates` ("" when none). */
export function evidenceTree(e: Evidence, templates: readonly LearnedTemplate[]): string {
  return templates.find((t) => t.id === e.templateId)?.treeId ?? "";
}

/**
 * Inserts new templates, stores new states of known ones and their new
 * evidence, in one batch; with `observation`, the same batch ends with
 * its insert (one D1 call for all that learning writes).
 */
export async function saveTemplates(
  db: D1Database,
  fresh: readonly LearnedTemplate[],
  updated: readonly LearnedTemplate[],
  now = Date.now(),
  evidence: readonly Evidence[] = [],
  observation?: Observation,
): Promise<void> {
  const statements = [
    ...fresh.map((t) => insertTemplateStatement(db, t, now)),
    ...updated.map((t) => updateTemplateStatement(db, t, now)),
    ...evidence.map((e) => evidenceStatement(db, e, evidenceTree(e, [...fresh, ...updated]), now)),
    ...(observation ? [observeStatement(db, observation, now)] : []),
  ];
  if (statements.length === 0) return;
  await db.batch(statements);
}
