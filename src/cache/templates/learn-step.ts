import { weigh, type Outcome } from "./evidence";
import { induce, type LearnedTemplate, type Trajectory } from "./induce";
import type { Decomposed } from "./leaves";
import { induceEarlierTurns, turnOf, type NodeMeta } from "./turns";

/** A recent answer of the new answer's shape class: its trajectory, its node hash and what each node of its path is. */
export type Partner = Trajectory & { answerHash: string; nodes: ReadonlyArray<NodeMeta | undefined> };

/** A recorded answer that induced or confirmed a template (what a prune of that answer takes along). */
export interface TemplateEvidence {
  templateId: string;
  answerHash: string;
}

/** What one recorded answer teaches: the outcome per known template, their new states, new templates and the evidence rows. */
export interface LearnStep {
  outcomes: Outcome[];
  updated: LearnedTemplate[];
  fresh: LearnedTemplate[];
  evidence: TemplateEvidence[];
}

/** Weighs a fresh template against the partners it was not induced from (their trajectory at its turn), in place. */
function weighAgainst(template: LearnedTemplate, others: ReadonlyArray<{ t: Trajectory | null; hash: string }>, evidence: TemplateEvidence[]): void {
  for (const { t, hash } of others) {
    if (!t || template.state.refuted) continue;
    const { outcome, state } = weigh(template, t);
    if (outcome !== "unrelated") template.state = state;
    if (outcome === "confirmed") evidence.push({ templateId: template.id, answerHash: hash });
  }
}

/**
 * Learns from one answer the model gave (pure; src/store/templates/learn.ts
 * reads and writes around it): weighs it against the templates it fits
 * (`known`: confirm, fence or refute), and when none confirmed, pairs it with
 * its partners (recent answers of its shape) to induce templates for its turn
 * and, with the later answers of both runs as copy evidence, for their
 * earlier turns (turns.ts); each new template is weighed at once against the
 * other partners. A template already known keeps its state.
 *
 * `t`: the new trajectory; `parts`: its messages decomposed; `own`: what each
 * node of its path is (which earlier messages are recorded answers).
 */
export function learnStep(
  t: Trajectory,
  parts: readonly Decomposed[],
  answerHash: string,
  own: ReadonlyArray<NodeMeta | undefined>,
  known: readonly LearnedTemplate[],
  partners: readonly Partner[],
): LearnStep {
  const step: LearnStep = { outcomes: [], updated: [], fresh: [], evidence: [] };
  for (const template of known) {
    const { outcome, state } = weigh(template, t, parts.slice(template.pattern.anchorDepth));
    step.outcomes.push(outcome);
    if (outcome !== "unrelated") step.updated.push({ ...template, state });
    if (outcome === "confirmed") step.evidence.push({ templateId: template.id, answerHash });
  }
  if (step.outcomes.includes("confirmed")) return step;
  const fresh = new Map<string, LearnedTemplate>();
  const isNew = (id: string) => !fresh.has(id) && !known.some((k) => k.id === id);
  for (const partner of partners) {
    const template = induce(t, partner);
    if (!template || !isNew(template.id)) continue;
    step.evidence.push({ templateId: template.id, answerHash }, { templateId: template.id, answerHash: partner.answerHash });
    weighAgainst(
      template,
      partners.filter((o) => o !== partner).map((o) => ({ t: o, hash: o.answerHash })),
      step.evidence,
    );
    fresh.set(template.id, template);
  }
  for (const partner of partners) {
    for (const { turn, template, answers } of induceEarlierTurns(t, partner, own, partner.nodes)) {
      if (!isNew(template.id)) continue;
      step.evidence.push({ templateId: template.id, answerHash: answers[0] }, { templateId: template.id, answerHash: answers[1] });
      weighAgainst(
        template,
        partners.filter((o) => o !== partner).map((o) => ({ t: turnOf(o, turn, o.nodes[turn]), hash: o.hashes[turn] })),
        step.evidence,
      );
      fresh.set(template.id, template);
    }
  }
  step.fresh = [...fresh.values()];
  return step;
}
