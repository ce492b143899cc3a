import { weigh, type Outcome } from "./evidence";
import { induce, type LearnedTemplate, type Trajectory } from "./induce";
import { decomposeOnce, type Decomposed } from "./leaves";
import { induceEarlierTurns, turnOf, type NodeMeta } from "./turns";

/** A recent answer of the new answer's shape class: its trajectory, its node hash and what each node of its path is. */
export type Partner = Trajectory & { answerHash: string; nodes: ReadonlyArray<NodeMeta | undefined> };

/** A recorded answer that induced or confirmed a template (what a prune of that answer takes along). */
export interface TemplateEvidence {
  templateId: string;
  answerHash: string;
}

/** A partner or a known template learning left out because reading it threw (a number beyond a double, JSON that parses otherwise): what and why. */
export interface Skipped {
  kind: "partner" | "template";
  /** The partner's answer hash, or the template's id. */
  id: string;
  reason: string;
}

/** What one recorded answer teaches: the outcome per known template, their new states, new templates and the evidence rows. */
export interface LearnStep {
  outcomes: Outcome[];
  updated: LearnedTemplate[];
  fresh: LearnedTemplate[];
  evidence: TemplateEvidence[];
  /** What was left out (each once); the rest was learned from. */
  skipped: Skipped[];
}

/** `work()`, or undefined with `what` noted in `step.skipped` (once) when it throws. */
function orSkip<T>(step: LearnStep, what: Omit<Skipped, "reason">, work: () => T): T | undefined {
  try {
    return work();
  } catch (error) {
    if (!step.skipped.some((s) => s.kind === what.kind && s.id === what.id)) step.skipped.push({ ...what, reason: String(error) });
    return undefined;
  }
}

/**
 * Weighs a fresh template against the partners it was not induced from (their trajectory at its turn), in place.
 * A partner whose weighing throws is skipped: it teaches nothing, the others still weigh.
 */
function weighAgainst(template: LearnedTemplate, others: ReadonlyArray<{ t: Trajectory | null; hash: string; partner: string }>, step: LearnStep): void {
  for (const { t, hash, partner } of others) {
    if (!t || template.state.refuted) continue;
    const weighed = orSkip(step, { kind: "partner", id: partner }, () => weigh(template, t));
    if (!weighed) continue;
    if (weighed.outcome !== "unrelated") template.state = weighed.state;
    if (weighed.outcome === "confirmed") step.evidence.push({ templateId: template.id, answerHash: hash });
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
 *
 * A known template or a partner whose reading throws (a stored answer holding `1e400` in its arguments, which
 * parse to Infinity that canonical JSON refuses, or other JSON a deeper step reads otherwise) is skipped and
 * named in `skipped`: before, the whole step threw, and since the new answer was then never observed, every
 * later answer of its shape read the same bad partner among its recent siblings and failed too.
 */
export function learnStep(
  t: Trajectory,
  parts: readonly Decomposed[],
  answerHash: string,
  own: ReadonlyArray<NodeMeta | undefined>,
  known: readonly LearnedTemplate[],
  partners: readonly Partner[],
): LearnStep {
  const step: LearnStep = { outcomes: [], updated: [], fresh: [], evidence: [], skipped: [] };
  for (const template of known) {
    const weighed = orSkip(step, { kind: "template", id: template.id }, () => weigh(template, t, parts.slice(template.pattern.anchorDepth)));
    if (!weighed) continue;
    const { outcome, state } = weighed;
    step.outcomes.push(outcome);
    if (outcome !== "unrelated") step.updated.push({ ...template, state });
    if (outcome === "confirmed") step.evidence.push({ templateId: template.id, answerHash });
  }
  if (step.outcomes.includes("confirmed")) return step;
  const fresh = new Map<string, LearnedTemplate>();
  const isNew = (id: string) => !fresh.has(id) && !known.some((k) => k.id === id);
  // A partner whose messages or answer cannot be read (decomposed) is no partner, before it weighs anything.
  for (const p of partners) orSkip(step, { kind: "partner", id: p.answerHash }, () => [p.answer, ...p.messages, ...(p.stored ?? [])].forEach(decomposeOnce));
  const sound = (p: Partner) => !step.skipped.some((s) => s.kind === "partner" && s.id === p.answerHash);
  for (const partner of partners.filter(sound)) {
    const template = orSkip(step, { kind: "partner", id: partner.answerHash }, () => induce(t, partner));
    if (!template || !isNew(template.id)) continue;
    step.evidence.push({ templateId: template.id, answerHash }, { templateId: template.id, answerHash: partner.answerHash });
    weighAgainst(
      template,
      partners.filter((o) => o !== partner && sound(o)).map((o) => ({ t: o, hash: o.answerHash, partner: o.answerHash })),
      step,
    );
    fresh.set(template.id, template);
  }
  for (const partner of partners.filter(sound)) {
    const earlier = orSkip(step, { kind: "partner", id: partner.answerHash }, () => induceEarlierTurns(t, partner, own, partner.nodes)) ?? [];
    for (const { turn, template, answers } of earlier) {
      if (!isNew(template.id)) continue;
      step.evidence.push({ templateId: template.id, answerHash: answers[0] }, { templateId: template.id, answerHash: answers[1] });
      weighAgainst(
        template,
        partners
          .filter((o) => o !== partner && sound(o))
          .map((o) => ({
            t: orSkip(step, { kind: "partner", id: o.answerHash }, () => turnOf(o, turn, o.nodes[turn])) ?? null,
            hash: o.hashes[turn],
            partner: o.answerHash,
          })),
        step,
      );
      fresh.set(template.id, template);
    }
  }
  step.fresh = [...fresh.values()];
  return step;
}
