import { canonicalJson } from "../../core/canonical";
import { envelopeOf, keptEnvelope, withEnvelope } from "../../core/envelope";
import { digest } from "../../core/hash";
import type { CanonicalMessage } from "../../core/messages";
import { decompose, type Decomposed } from "./leaves";
import { bindingDigest, lookupKeys, MAX_SUFFIX, skeletonDigests, templateId, type MessagePattern, type Ref, type Slot, type TemplatePattern, type TemplateState } from "./learned";
import { ordersOf } from "./orders";
import { compareRanged, isIdentityLike, isRanged, shapeOf, slotTypeOf } from "./slot-types";

/** One recorded generation: the request's path and the answer the model gave. */
export interface Trajectory {
  /** The tree id (h0). */
  root: string;
  /** h_1..h_n. */
  hashes: string[];
  /** The request's messages in hash form (canonical arguments). */
  messages: CanonicalMessage[];
  /** The answer as it is stored and served. */
  answer: CanonicalMessage;
  meta: { finishReason: string; promptTokens: number; completionTokens: number; latencyMs: number };
}

/** A template as it is stored: where it is found, what it matches, what it knows. */
export interface LearnedTemplate {
  id: string;
  treeId: string;
  lookupKey: string;
  pattern: TemplatePattern;
  state: TemplateState;
}

/**
 * The class of trajectories that can pair with this one: same tree, same
 * skeletons everywhere, same answer skeleton and finish reason.
 *
 * `parts`: the messages already decomposed (a caller that has them saves doing it again).
 */
export function shapeKeyOf(t: Trajectory, parts: readonly Decomposed[] = t.messages.map(decompose)): string {
  const skeletons = parts.map((p) => p.skeleton);
  return digest(`shape\u0000${t.root}\u0000${canonicalJson([skeletons, decompose(t.answer).skeleton, t.meta.finishReason])}`);
}

class NoTemplate extends Error {}

/** Assigns slots to differing leaf pairs: the same pair of values is the same slot. */
class SlotTable {
  readonly slots: Slot[] = [];
  private readonly byPair = new Map<string, number>();

  /** The slot for a differing pair, created on first sight; throws when the values are not identity-like. */
  slotFor(a: string, b: string, kind: "text" | "number"): number {
    const key = `${a}\u0000${b}`;
    const known = this.byPair.get(key);
    if (known !== undefined) return known;
    const type = slotTypeOf(a, kind);
    if (type !== slotTypeOf(b, kind) || !isIdentityLike(type)) throw new NoTemplate();
    const slot: Slot = { type, values: [a, b], shapes: [...new Set([shapeOf(a), shapeOf(b)])], copied: false };
    if (isRanged(type)) {
      if (!Number.isFinite(compareRanged(type, a, b))) throw new NoTemplate();
      const low = compareRanged(type, a, b) <= 0;
      slot.min = low ? a : b;
      slot.max = low ? b : a;
    }
    this.slots.push(slot);
    this.byPair.set(key, this.slots.length - 1);
    return this.slots.length - 1;
  }

  /** The slot an answer leaf pair copies, or undefined. */
  copied(a: string, b: string): number | undefined {
    return this.byPair.get(`${a}\u0000${b}`);
  }
}

function alignMessage(a: Decomposed, b: Decomposed, table: SlotTable): MessagePattern {
  if (a.skeleton !== b.skeleton || a.leaves.length !== b.leaves.length) throw new NoTemplate();
  const refs: Ref[] = a.leaves.map((leaf, i) => {
    const other = b.leaves[i];
    if (leaf.kind !== other.kind) throw new NoTemplate();
    return leaf.value === other.value ? leaf.value : table.slotFor(leaf.value, other.value, leaf.kind);
  });
  return { skeleton: a.skeleton, refs };
}

/** Every leaf where the answers differ must copy a slot, at the same slot in both; otherwise it is derived or decided. */
function alignAnswer(a: Decomposed, b: Decomposed, table: SlotTable): MessagePattern {
  if (a.skeleton !== b.skeleton || a.leaves.length !== b.leaves.length) throw new NoTemplate();
  const refs: Ref[] = a.leaves.map((leaf, i) => {
    const other = b.leaves[i].value;
    if (leaf.value === other) return leaf.value;
    const slot = table.copied(leaf.value, other);
    if (slot === undefined) throw new NoTemplate();
    return slot;
  });
  return { skeleton: a.skeleton, refs };
}

/**
 * Whether every slot is data the model demonstrably copies: an assistant
 * message (an earlier answer on the path, or the answer itself) holds it after
 * a message that is not the assistant's (user, system, tool) gave it. A slot
 * no answer copies is an input to a decision, so the pair makes no template.
 */
function everySlotCopied(roles: readonly string[], patterns: readonly MessagePattern[], slots: Slot[]): boolean {
  const given = new Set<number>();
  for (let i = 0; i < patterns.length; i++) {
    const refs = patterns[i].refs.filter((r): r is number => typeof r === "number");
    if (roles[i] === "assistant") {
      for (const r of refs) if (given.has(r)) slots[r].copied = true;
    } else {
      for (const r of refs) given.add(r);
    }
  }
  return slots.every((s) => s.copied);
}

/**
 * The envelope a template's answers carry (src/core/envelope.ts): the choice and response fields both
 * answers sent with one value. A field that differs describes one response or one prompt (Groq's
 * `x_groq.id`, vLLM's `prompt_logprobs`, which decodes the prompt, Together's echoed `prompt`, logprobs
 * of the answer's tokens): served from the first answer, it would describe another request, and no slot
 * renders it. Undefined when nothing is shared.
 */
export function sharedEnvelope(a: CanonicalMessage, b: CanonicalMessage): Record<string, unknown> | undefined {
  const other = envelopeOf(b);
  const shared = keptEnvelope(envelopeOf(a), (part, name, value) => name in other[part] && canonicalJson(value) === canonicalJson(other[part][name]));
  const keys = withEnvelope({}, shared) as Record<string, unknown>;
  return Object.keys(keys).length > 0 ? keys : undefined;
}

/**
 * Generalises two sibling trajectories of one tree into a template, or null.
 * The anchor is their deepest common node; every leaf that differs after it
 * becomes a slot, and must be identity-like (never a categorical word); every
 * leaf where the answers differ must copy one slot verbatim in both; and every
 * slot must be copied by some answer on the path (everySlotCopied).
 */
export function induce(a: Trajectory, b: Trajectory): LearnedTemplate | null {
  const n = a.hashes.length;
  if (a.root !== b.root || n !== b.hashes.length || a.meta.finishReason !== b.meta.finishReason) return null;
  let k = 0;
  while (k < n && a.hashes[k] === b.hashes[k]) k++;
  if (k === n || n - k > MAX_SUFFIX) return null;
  const table = new SlotTable();
  try {
    const all = a.messages.map((m, i) => (i < k ? { skeleton: "", leaves: [] } : decompose(m)));
    const suffix = all.slice(k).map((da, i) => alignMessage(da, decompose(b.messages[k + i]), table));
    const answer = alignAnswer(decompose(a.answer), decompose(b.answer), table);
    const roles = [...a.messages.slice(k).map((m) => m.role), "assistant"];
    if (!everySlotCopied(roles, [...suffix, answer], table.slots)) return null;
    const envelope = sharedEnvelope(a.answer, b.answer);
    const pattern: TemplatePattern = { anchorDepth: k, suffix, answer: { ...answer, ...a.meta, ...(envelope ? { envelope } : {}) } };
    const lookupKey = lookupKeys(a.root, a.hashes, skeletonDigests(all)).find((x) => x.depth === k)?.key;
    if (!lookupKey || table.slots.length === 0) return null;
    const bindingA = table.slots.map((s) => s.values[0]);
    const bindingB = table.slots.map((s) => s.values[1]);
    return {
      id: templateId(lookupKey, pattern),
      treeId: a.root,
      lookupKey,
      pattern,
      state: { slots: table.slots, bindings: [bindingDigest(bindingA), bindingDigest(bindingB)], refuted: false, orders: ordersOf(table.slots, [bindingA, bindingB]) },
    };
  } catch (error) {
    if (error instanceof NoTemplate) return null;
    throw error;
  }
}
