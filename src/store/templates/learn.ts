import type { CanonicalMessage } from "../../core/messages";
import { logEvent } from "../../observability/log-event";
import type { Outcome } from "../../cache/templates/evidence";
import { shapeKeyOf, type Trajectory } from "../../cache/templates/induce";
import { learnStep, type LearnStep, type Partner } from "../../cache/templates/learn-step";
import { decomposeOnce, type Decomposed } from "../../cache/templates/leaves";
import { lookupKeys, skeletonDigests } from "../../cache/templates/learned";
import type { RecordInput } from "../tree/record";
import { readLearning, type LearningRead, type PathTo } from "./learned";
import { messageReader, type MessageReader } from "./message-reader";
import { saveTemplates } from "./save";
import { templateViewOfFrame } from "../../providers";

export { forgetParsed, hashFormMessage, storedMessage } from "./message-reader";

/** Partners a new answer is paired with, and templates it is weighed against: the bounds of learning. */
export const MAX_PARTNERS = 4;
export const MAX_WEIGHED = 32;

/** What one answer taught. */
export interface LearnReport {
  outcomes: Outcome[];
  induced: number;
}

/** A recording's trajectory, its messages decomposed, its lookup keys and its shape class: all learning needs before it reads. */
export interface Prepared {
  input: RecordInput;
  t: Trajectory;
  parts: Decomposed[];
  keys: string[];
  shapeKey: string;
  /** How the tree's stored messages read as chat's (through its API's template view, when it is not chat). */
  reader: MessageReader;
}

/** Throws when a message of the recording has no chat view (src/store/templates/message-reader.ts): it teaches nothing. */
export function prepare(input: RecordInput): Prepared {
  const reader = messageReader(templateViewOfFrame(input.frameJson));
  const t: Trajectory = {
    root: input.treeId,
    hashes: input.path.map((p) => p.hash),
    messages: input.path.map((p) => reader.hashForm(p.json)),
    answer: reader.answer(input.answer.json),
    meta: {
      finishReason: input.answer.finishReason,
      promptTokens: input.answer.promptTokens,
      completionTokens: input.answer.completionTokens,
      latencyMs: input.answer.latencyMs,
    },
  };
  const parts = t.messages.map(decomposeOnce);
  const keys = lookupKeys(t.root, t.hashes, skeletonDigests(parts)).map((k) => k.key);
  return { input, t, parts, keys, shapeKey: shapeKeyOf(t, parts), reader };
}

/**
 * A partner's trajectory. A node it shares with the new answer's path (same
 * path hash: same message after the same ancestors) takes that path's message
 * as already parsed (`known`); only the nodes where they part are parsed.
 */
function partnerOf(read: PathTo | null, root: string, answerHash: string, known: ReadonlyMap<string, CanonicalMessage>, reader: MessageReader): Partner | null {
  if (!read || read.path[0].parent !== root) return null;
  try {
    return partnerFrom(read, root, answerHash, known, reader);
  } catch (error) {
    // A partner whose stored messages do not parse (a damaged or foreign row) is no partner: without this, every
    // later recording of its shape, which reads it among its recent siblings, failed to learn (the tree stopped learning).
    logEvent("warn", "template_partner_skipped", { tree: root, node: answerHash, error: String(error) });
    return null;
  }
}

function partnerFrom(read: PathTo, root: string, answerHash: string, known: ReadonlyMap<string, CanonicalMessage>, reader: MessageReader): Partner {
  return {
    answerHash,
    nodes: read.path.map((p) => p.meta),
    root,
    hashes: read.path.map((p) => p.hash),
    messages: read.path.map((p) => known.get(p.hash) ?? reader.hashForm(p.message)),
    stored: read.path.map((p) => reader.stored(p.message)),
    answer: reader.stored(read.answer.message),
    meta: {
      finishReason: read.answer.finishReason ?? "stop",
      promptTokens: read.answer.promptTokens,
      completionTokens: read.answer.completionTokens,
      latencyMs: read.answer.latencyMs,
    },
  };
}

/**
 * What one recording teaches, given what learning read for it (pure): its partners' and its own path
 * parsed, then learnStep. `read.templates`: at most MAX_WEIGHED, the order readLearning gives.
 */
export function stepOf(p: Prepared, read: LearningRead): LearnStep {
  const { t } = p;
  const shared = new Map(t.hashes.map((hash, i) => [hash, t.messages[i]]));
  const partners = read.partners.map((r) => partnerOf(r.path, t.root, r.hash, shared, p.reader)).filter((r) => r !== null);
  const own = read.own?.path.map((n) => n.meta) ?? [];
  // The nodes as stored (an earlier answer as the model wrote it, not as the client echoed it).
  const stored = read.own ? { stored: read.own.path.map((n) => p.reader.stored(n.message)) } : {};
  const step = learnStep({ ...t, ...stored }, p.parts, p.input.answer.hash, own, read.templates, partners);
  // What learning left out, one line each; it learned from the rest (src/cache/templates/learn-step.ts).
  for (const s of step.skipped) {
    if (s.kind === "partner") logEvent("warn", "template_partner_skipped", { tree: t.root, node: s.id, error: s.reason });
    else logEvent("warn", "template_skipped", { tree: t.root, template: s.id, error: s.reason });
  }
  return step;
}

/**
 * Learns from one answer the model gave (in the tree's Durable Object, after
 * record): weighs it against the templates it fits (confirm, fence or
 * refute), and when none confirmed, pairs it with up to four recent siblings
 * of the same shape to induce new templates, each weighed at once against the
 * other siblings loaded. Bounded: two D1 calls, each a batch: the templates
 * it fits with its (at most four) recent siblings and their paths, then every
 * write (templates, evidence, the answer's observation), stamped `now`.
 * A batch of recordings learns in one pass instead (learn-batch.ts), the same rows.
 */
export async function learnFrom(db: D1Database, input: RecordInput, now = Date.now()): Promise<LearnReport> {
  const p = prepare(input);
  const read = await readLearning(db, p.keys, MAX_WEIGHED, { shapeKey: p.shapeKey, answerHash: input.answer.hash, limit: MAX_PARTNERS });
  const { outcomes, updated, fresh, evidence } = stepOf(p, read);
  await saveTemplates(db, fresh, updated, now, evidence, { treeId: p.t.root, shapeKey: p.shapeKey, answerHash: input.answer.hash });
  return { outcomes, induced: fresh.length };
}
