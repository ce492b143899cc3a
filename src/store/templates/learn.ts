import type { CanonicalMessage } from "../../core/messages";
import { hashForm } from "../../cache/templates/declared";
import { weigh, type Outcome } from "../../cache/templates/evidence";
import { induce, shapeKeyOf, type LearnedTemplate, type Trajectory } from "../../cache/templates/induce";
import { decompose } from "../../cache/templates/leaves";
import { lookupKeys, skeletonDigests } from "../../cache/templates/learned";
import { induceEarlierTurns, turnOf, type NodeMeta } from "../../cache/templates/turns";
import type { RecordInput } from "../tree/record";
import { readLearning, saveTemplates, type Evidence, type PathTo } from "./learned";

/** Partners a new answer is paired with, and templates it is weighed against: the bounds of learning. */
const MAX_PARTNERS = 4;
const MAX_WEIGHED = 32;

/** What one answer taught. */
export interface LearnReport {
  outcomes: Outcome[];
  induced: number;
}

function trajectoryOf(input: RecordInput): Trajectory {
  return {
    root: input.treeId,
    hashes: input.path.map((p) => p.hash),
    messages: input.path.map((p) => hashForm(JSON.parse(p.json) as CanonicalMessage)),
    answer: JSON.parse(input.answer.json) as CanonicalMessage,
    meta: { finishReason: input.answer.finishReason, promptTokens: input.answer.promptTokens, completionTokens: input.answer.completionTokens, latencyMs: input.answer.latencyMs },
  };
}

/** A partner's trajectory, the hash of its answer and what each node of its path is. */
type Partnered = Trajectory & { answerHash: string; nodes: NodeMeta[] };

/**
 * A partner's trajectory. A node it shares with the new answer's path (same
 * path hash: same message after the same ancestors) takes that path's message
 * as already parsed (`known`); only the nodes where they part are parsed.
 */
function partnerOf(read: PathTo | null, root: string, answerHash: string, known: ReadonlyMap<string, CanonicalMessage>): Partnered | null {
  if (!read || read.path[0].parent !== root) return null;
  return {
    answerHash,
    nodes: read.path.map((p) => p.meta),
    root,
    hashes: read.path.map((p) => p.hash),
    messages: read.path.map((p) => known.get(p.hash) ?? hashForm(JSON.parse(p.message) as CanonicalMessage)),
    answer: JSON.parse(read.answer.message) as CanonicalMessage,
    meta: { finishReason: read.answer.finishReason ?? "stop", promptTokens: read.answer.promptTokens, completionTokens: read.answer.completionTokens, latencyMs: read.answer.latencyMs },
  };
}

/**
 * Learns from one answer the model gave (in the tree's Durable Object, after
 * record): weighs it against the templates it fits (confirm, fence or
 * refute), and when none confirmed, pairs it with up to four recent siblings
 * of the same shape to induce new templates, each weighed at once against the
 * other siblings loaded. Bounded: two D1 calls, each a batch: the templates
 * it fits with its (at most four) recent siblings and their paths, then every
 * write (templates, evidence, the answer's observation).
 */
export async function learnFrom(db: D1Database, input: RecordInput): Promise<LearnReport> {
  const t = trajectoryOf(input);
  const parts = t.messages.map(decompose);
  const keys = lookupKeys(t.root, t.hashes, skeletonDigests(parts));
  const shapeKey = shapeKeyOf(t, parts);
  const read = await readLearning(db, keys.map((k) => k.key), MAX_WEIGHED, { shapeKey, answerHash: input.answer.hash, limit: MAX_PARTNERS });
  const known = read.templates;
  const updated: LearnedTemplate[] = [];
  const outcomes: Outcome[] = [];
  const evidence: Evidence[] = [];
  for (const template of known) {
    const { outcome, state } = weigh(template, t, parts.slice(template.pattern.anchorDepth));
    outcomes.push(outcome);
    if (outcome !== "unrelated") updated.push({ ...template, state });
    if (outcome === "confirmed") evidence.push({ templateId: template.id, answerHash: input.answer.hash });
  }
  const fresh = new Map<string, LearnedTemplate>();
  if (!outcomes.includes("confirmed")) {
    const shared = new Map(t.hashes.map((hash, i) => [hash, t.messages[i]]));
    const partners = read.partners.map((p) => partnerOf(p.path, t.root, p.hash, shared)).filter((p) => p !== null);
    for (const partner of partners) {
      const template = induce(t, partner);
      if (!template || fresh.has(template.id) || known.some((k) => k.id === template.id)) continue;
      evidence.push({ templateId: template.id, answerHash: input.answer.hash }, { templateId: template.id, answerHash: partner.answerHash });
      for (const other of partners) {
        if (other === partner || template.state.refuted) continue;
        const { outcome, state } = weigh(template, other);
        if (outcome !== "unrelated") template.state = state;
        if (outcome === "confirmed") evidence.push({ templateId: template.id, answerHash: other.answerHash });
      }
      fresh.set(template.id, template);
    }
    // Earlier turns, with this run's later answers as copy evidence (turns.ts); a template already stored keeps its state.
    const own = read.own?.path.map((p) => p.meta) ?? [];
    for (const partner of partners) {
      for (const { turn, template, answers } of induceEarlierTurns(t, partner, own, partner.nodes)) {
        if (fresh.has(template.id)) continue;
        evidence.push({ templateId: template.id, answerHash: answers[0] }, { templateId: template.id, answerHash: answers[1] });
        for (const other of partners) {
          const earlier = other === partner ? null : turnOf(other, turn, other.nodes[turn]);
          if (!earlier || template.state.refuted) continue;
          const { outcome, state } = weigh(template, earlier);
          if (outcome !== "unrelated") template.state = state;
          if (outcome === "confirmed") evidence.push({ templateId: template.id, answerHash: other.hashes[turn] });
        }
        fresh.set(template.id, template);
      }
    }
  }
  await saveTemplates(db, [...fresh.values()], updated, Date.now(), evidence, { treeId: t.root, shapeKey, answerHash: input.answer.hash });
  return { outcomes, induced: fresh.size };
}
