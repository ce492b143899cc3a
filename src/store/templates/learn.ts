import type { CanonicalMessage } from "../../core/messages";
import { hashForm } from "../../cache/templates/declared";
import type { Outcome } from "../../cache/templates/evidence";
import { shapeKeyOf, type Trajectory } from "../../cache/templates/induce";
import { learnStep, type Partner } from "../../cache/templates/learn-step";
import { decomposeOnce } from "../../cache/templates/leaves";
import { lookupKeys, skeletonDigests } from "../../cache/templates/learned";
import type { RecordInput } from "../tree/record";
import { readLearning, saveTemplates, type PathTo } from "./learned";

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
    meta: {
      finishReason: input.answer.finishReason,
      promptTokens: input.answer.promptTokens,
      completionTokens: input.answer.completionTokens,
      latencyMs: input.answer.latencyMs,
    },
  };
}

/**
 * A partner's trajectory. A node it shares with the new answer's path (same
 * path hash: same message after the same ancestors) takes that path's message
 * as already parsed (`known`); only the nodes where they part are parsed.
 */
function partnerOf(read: PathTo | null, root: string, answerHash: string, known: ReadonlyMap<string, CanonicalMessage>): Partner | null {
  if (!read || read.path[0].parent !== root) return null;
  return {
    answerHash,
    nodes: read.path.map((p) => p.meta),
    root,
    hashes: read.path.map((p) => p.hash),
    messages: read.path.map((p) => known.get(p.hash) ?? hashForm(JSON.parse(p.message) as CanonicalMessage)),
    stored: read.path.map((p) => JSON.parse(p.message) as CanonicalMessage),
    answer: JSON.parse(read.answer.message) as CanonicalMessage,
    meta: {
      finishReason: read.answer.finishReason ?? "stop",
      promptTokens: read.answer.promptTokens,
      completionTokens: read.answer.completionTokens,
      latencyMs: read.answer.latencyMs,
    },
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
  const parts = t.messages.map(decomposeOnce);
  const keys = lookupKeys(t.root, t.hashes, skeletonDigests(parts));
  const shapeKey = shapeKeyOf(t, parts);
  const read = await readLearning(
    db,
    keys.map((k) => k.key),
    MAX_WEIGHED,
    { shapeKey, answerHash: input.answer.hash, limit: MAX_PARTNERS },
  );
  const shared = new Map(t.hashes.map((hash, i) => [hash, t.messages[i]]));
  const partners = read.partners.map((p) => partnerOf(p.path, t.root, p.hash, shared)).filter((p) => p !== null);
  const own = read.own?.path.map((p) => p.meta) ?? [];
  // The nodes as stored (an earlier answer as the model wrote it, not as the client echoed it).
  if (read.own) t.stored = read.own.path.map((p) => JSON.parse(p.message) as CanonicalMessage);
  const { outcomes, updated, fresh, evidence } = learnStep(t, parts, input.answer.hash, own, read.templates, partners);
  await saveTemplates(db, fresh, updated, Date.now(), evidence, { treeId: t.root, shapeKey, answerHash: input.answer.hash });
  return { outcomes, induced: fresh.length };
}
