import { z } from "zod";
import type { LearnedTemplate } from "../../cache/templates/induce";
import type { TemplatePattern, TemplateState } from "../../cache/templates/learned";
import { logEvent } from "../../observability/log-event";
import type { TemplateRecord } from "../tree/schema";

/** A template row as the template queries select it. */
export type TemplateRowRead = Pick<TemplateRecord, "id" | "tree_id" | "lookup_key" | "pattern" | "state">;

/**
 * What every reader of a template needs to find in its row (the rest is read as written, and fields added
 * later stay optional there): checked only, never used to rewrite the row's values (the parsed JSON is kept whole).
 */
const patternShape = z.object({
  anchorDepth: z.number(),
  suffix: z.array(z.object({ skeleton: z.string(), refs: z.array(z.unknown()) })),
  answer: z.object({ skeleton: z.string(), refs: z.array(z.unknown()) }),
});
const stateShape = z.object({ slots: z.array(z.object({ type: z.string() })), bindings: z.array(z.string()), refuted: z.boolean() });

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A stored template row read back, or null when its pattern or state is not the JSON learning writes (a
 * damaged row): logged once per read as `template_row_damaged`, naming the template and its tree.
 */
export function templateOf(row: TemplateRowRead): LearnedTemplate | null {
  const pattern = parsed(row.pattern);
  const state = parsed(row.state);
  if (!patternShape.safeParse(pattern).success || !stateShape.safeParse(state).success) {
    logEvent("warn", "template_row_damaged", { tree: row.tree_id, template: row.id });
    return null;
  }
  // SAFETY: both were checked above for every field a reader of a template relies on.
  return { id: row.id, treeId: row.tree_id, lookupKey: row.lookup_key, pattern: pattern as TemplatePattern, state: state as TemplateState };
}

/** The templates of `rows` whose JSON reads back (templateOf): the damaged ones left out, each logged. */
export function soundTemplates(rows: readonly TemplateRowRead[]): LearnedTemplate[] {
  return rows.map(templateOf).filter((t): t is LearnedTemplate => t !== null);
}
