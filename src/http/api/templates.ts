import { isConfirmed, unconfirmedReason, type Ref } from "../../cache/templates/learned";
import { isDerived } from "../../cache/templates/transforms";
import type { LearnedTemplate } from "../../cache/templates/induce";
import { listTemplates, templateHits } from "../../store/templates/learned";
import type { TreeCtx } from "./tree-access";

/** A learned template as the API shows it: its shape, its slots and how far it is confirmed. */
function summary(t: LearnedTemplate, minBindings: number, hits: number) {
  return {
    id: t.id,
    anchor_depth: t.pattern.anchorDepth,
    suffix_messages: t.pattern.suffix.length,
    finish_reason: t.pattern.answer.finishReason,
    bindings: t.state.bindings.length,
    hits,
    confirmed: isConfirmed(t.state, minBindings),
    /** Why it does not serve yet, in one line (`not yet confirmed: 2 of 3 bindings`), or null when it serves in its range. */
    not_serving: unconfirmedReason(t.state, minBindings),
    refuted: t.state.refuted,
    /** Answer leaves learned as a function of a slot (transforms.ts): `{ slot: 4, fn: "cents" }`. */
    derived: t.pattern.answer.refs.filter((r: Ref) => isDerived(r)),
    slots: t.state.slots.map((s) => ({ type: s.type, copied: s.copied, values: s.values, min: s.min ?? null, max: s.max ?? null })),
  };
}

/** `GET /api/trees/:treeId/templates` (behind treeAccess): the tree's learned templates (at most 100, newest first). */
export async function getTemplates(c: TreeCtx): Promise<Response> {
  const treeId = c.var.tree.id;
  const db = c.var.shard.db;
  const { minBindings } = c.var.services.config.templates;
  const [templates, hits] = await Promise.all([listTemplates(db, treeId), templateHits(db, treeId)]);
  return c.json({ tree_id: treeId, min_bindings: minBindings, data: templates.map((t) => summary(t, minBindings, hits.get(t.id) ?? 0)) });
}
