import { digest } from "../../core/hash";
import type { DeclaredConfirmation } from "../../cache/templates/declared";
import { logEvent } from "../../observability/log-event";

/**
 * Declared answers' evidence lives in the `templates` table, one row per
 * (answer, binding), marked by this anchor depth (learned templates have 0 or
 * more): `lookup_key` is the request key h_n the answer is a child of,
 * `pattern` names the answer node, `state` the binding digest. Learned lookups
 * never match these keys, and the templates API does not list them.
 */
export const DECLARED_ANCHOR = -1;
/** Rows kept per node: more distinct bindings than any serving threshold needs. */
export const MAX_DECLARED_EVIDENCE = 64;

/** A damaged row's stand-in: it names no answer and no binding, and refuses every binding but an exact repeat (declaredRefusal). */
const DAMAGED: DeclaredConfirmation = { answer: "", binding: "", damaged: true };

/** One evidence row read back; DAMAGED (logged) when it is not the JSON recordDeclaredEvidence writes. */
function parse(key: string, pattern: string, state: string): DeclaredConfirmation {
  try {
    const answer = (JSON.parse(pattern) as { declared?: unknown } | null)?.declared;
    const binding = (JSON.parse(state) as { binding?: unknown } | null)?.binding;
    if (typeof answer === "string" && typeof binding === "string") return { answer, binding };
  } catch {
    // Not JSON: damaged, below.
  }
  logEvent("warn", "declared_evidence_damaged", { key });
  return DAMAGED;
}

/**
 * The evidence recorded for the declared answers at request key `key`: one indexed query (templates_lookup_idx).
 * A damaged row is kept as DAMAGED, never skipped: skipping it could hide that the model answered this node
 * two ways, and serve one answer to every binding (before 11-28).
 */
export async function readDeclaredEvidence(db: D1Database, key: string): Promise<DeclaredConfirmation[]> {
  const { results } = await db
    .prepare("SELECT pattern, state FROM templates WHERE lookup_key = ?1 AND anchor_depth = ?2 LIMIT ?3")
    .bind(key, DECLARED_ANCHOR, MAX_DECLARED_EVIDENCE)
    .all<{ pattern: string; state: string }>();
  return results.map((r) => parse(key, r.pattern, r.state));
}

/**
 * Notes that the model answered `answer` at `key` for a binding (idempotent,
 * at most MAX_DECLARED_EVIDENCE rows per node). One statement.
 */
export async function recordDeclaredEvidence(
  db: D1Database,
  e: { treeId: string; key: string; answer: string; binding: string },
  now = Date.now(),
): Promise<void> {
  const id = digest(`declared\u0000${e.key}\u0000${e.answer}\u0000${e.binding}`);
  await db
    .prepare(
      `INSERT INTO templates (id, tree_id, lookup_key, anchor_depth, pattern, state, bindings, refuted, hits, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, 1, 0, 0, ?7, ?7
       WHERE (SELECT count(*) FROM templates WHERE lookup_key = ?3 AND anchor_depth = ?4) < ?8
       ON CONFLICT(id) DO NOTHING`,
    )
    .bind(id, e.treeId, e.key, DECLARED_ANCHOR, JSON.stringify({ declared: e.answer }), JSON.stringify({ binding: e.binding }), now, MAX_DECLARED_EVIDENCE)
    .run();
}
