import type { CanonicalMessage } from "../../core/messages";
import { BoundedMemo } from "../../core/memo";
import { logEvent } from "../../observability/log-event";
import { hashForm } from "../../cache/templates/declared";
import type { Outcome } from "../../cache/templates/evidence";
import { shapeKeyOf, type Trajectory } from "../../cache/templates/induce";
import { learnStep, type LearnStep, type Partner } from "../../cache/templates/learn-step";
import { decomposeOnce, type Decomposed } from "../../cache/templates/leaves";
import { lookupKeys, skeletonDigests } from "../../cache/templates/learned";
import type { RecordInput } from "../tree/record";
import { readLearning, type LearningRead, type PathTo } from "./learned";
import { saveTemplates } from "./save";

/** Partners a new answer is paired with, and templates it is weighed against: the bounds of learning. */
export const MAX_PARTNERS = 4;
export const MAX_WEIGHED = 32;

/** What one answer taught. */
export interface LearnReport {
  outcomes: Outcome[];
  induced: number;
}

/**
 * Messages parsed from their JSON text, as stored (`stored`) and in hash form (`hashForm`), isolate-wide
 * and bounded (2M characters of JSON, oldest out first): a tree's recordings share their path's first
 * messages (a long system prompt), and a partner's path is read again by each recording paired with it.
 * Keyed by the text itself, so a hit is exactly what parsing that text gives; the messages are never changed
 * once parsed, and so the per-message memos of learning (decomposeOnce, name ties) carry across recordings.
 */
const parsed = { stored: new BoundedMemo<CanonicalMessage>(1 << 20, () => 0), hashForm: new BoundedMemo<CanonicalMessage>(1 << 20, () => 0) };

/** Forgets every parsed message (a benchmark's rounds start cold). */
export function forgetParsed(): void {
  parsed.stored.clear();
  parsed.hashForm.clear();
}

/** The message a stored JSON text holds (shared: never change it). */
export function storedMessage(json: string): CanonicalMessage {
  let message = parsed.stored.get(json);
  if (!message) parsed.stored.set(json, (message = JSON.parse(json) as CanonicalMessage));
  return message;
}

/** The hash form of the message a JSON text holds (shared: never change it). */
export function hashFormMessage(json: string): CanonicalMessage {
  let message = parsed.hashForm.get(json);
  if (!message) parsed.hashForm.set(json, (message = hashForm(JSON.parse(json) as CanonicalMessage)));
  return message;
}

/** A recording's trajectory, its messages decomposed, its lookup keys and its shape class: all learning needs before it reads. */
export interface Prepared {
  input: RecordInput;
  t: Trajectory;
  parts: Decomposed[];
  keys: string[];
  shapeKey: string;
}

export function prepare(input: RecordInput): Prepared {
  const t: Trajectory = {
    root: input.treeId,
    hashes: input.path.map((p) => p.hash),
    messages: input.path.map((p) => hashFormMessage(p.json)),
    answer: JSON.parse(input.answer.json) as CanonicalMessage,
    meta: {
      finishReason: input.answer.finishReason,
      promptTokens: input.answer.promptTokens,
      completionTokens: input.answer.completionTokens,
      latencyMs: input.answer.latencyMs,
    },
  };
  const parts = t.messages.map(decomposeOnce);
  const keys = lookupKeys(t.root, t.hashes, skeletonDigests(parts)).map((k) => k.key);
  return { input, t, parts, keys, shapeKey: shapeKeyOf(t, parts) };
}

/**
 * A partner's trajectory. A node it shares with the new answer's path (same
 * path hash: same message after the same ancestors) takes that path's message
 * as already parsed (`known`); only the nodes where they part are parsed.
 */
function partnerOf(read: PathTo | null, root: string, answerHash: string, known: ReadonlyMap<string, CanonicalMessage>): Partner | null {
  if (!read || read.path[0].parent !== root) return null;
  try {
    return partnerFrom(read, root, answerHash, known);
  } catch (error) {
    // A partner whose stored messages do not parse (a damaged or foreign row) is no partner: without this, every
    // later recording of its shape, which reads it among its recent siblings, failed to learn (the tree stopped learning).
    logEvent("warn", "template_partner_skipped", { tree: root, node: answerHash, error: String(error) });
    return null;
  }
}

function partnerFrom(read: PathTo, root: string, answerHash: string, known: ReadonlyMap<string, CanonicalMessage>): Partner {
  return {
    answerHash,
    nodes: read.path.map((p) => p.meta),
    root,
    hashes: read.path.map((p) => p.hash),
    messages: read.path.map((p) => known.get(p.hash) ?? hashFormMessage(p.message)),
    stored: read.path.map((p) => storedMessage(p.message)),
    answer: storedMessage(read.answer.message),
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
  const partners = read.partners.map((r) => partnerOf(r.path, t.root, r.hash, shared)).filter((r) => r !== null);
  const own = read.own?.path.map((n) => n.meta) ?? [];
  // The nodes as stored (an earlier answer as the model wrote it, not as the client echoed it).
  const stored = read.own ? { stored: read.own.path.map((n) => storedMessage(n.message)) } : {};
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
