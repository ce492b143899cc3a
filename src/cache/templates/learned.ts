import { canonicalJson } from "../../core/canonical";
import { digest } from "../../core/hash";
import type { CanonicalMessage } from "../../core/messages";
import { isCodeLeaf } from "./codes";
import { compose, isGroupedLeaf, type Decomposed } from "./leaves";
import { orderReason, type SlotOrder } from "./orders";
import { isWordValue } from "./name-ties";
import { neverTemplated, quoted, rangeSide, slotLabel } from "./miss-reason";
import { partReason } from "./part-reason";
import { inRange, isRanged, rangedValue, shapeOf, slotTypeOf, type SlotType } from "./slot-types";
import { applyTransform, isDerived, type Derived } from "./transforms";

/** A leaf of a pattern: a literal value, the index of a slot, or (answers only) a function of a slot (transforms.ts). */
export type Ref = string | number | Derived;

/** One message of a pattern: its skeleton and a ref per leaf. */
export interface MessagePattern {
  skeleton: string;
  refs: Ref[];
}

/** What a template stands for: the messages after its anchor, and the answer it renders. */
export interface TemplatePattern {
  /** Messages before the suffix (the anchor h_k is at this depth; 0 is the tree root). */
  anchorDepth: number;
  suffix: MessagePattern[];
  answer: MessagePattern & {
    finishReason: string;
    promptTokens: number;
    completionTokens: number;
    latencyMs: number;
    /** The envelope of the answer it was learned from (src/core/envelope.ts), which its answers carry; none in templates learned before. */
    envelope?: Record<string, unknown>;
  };
}

/** What is known of one slot: its type, the values and shapes seen, the range confirmed and its fences. */
export interface Slot {
  type: SlotType;
  /** Distinct values seen (at most MAX_VALUES). */
  values: string[];
  shapes: string[];
  /** Whether the answer copies it (pass-through) or not (don't-care). */
  copied: boolean;
  min?: string;
  max?: string;
  /** The nearest values outside the range where the model answered differently: the range never grows past them. */
  fenceLow?: string;
  fenceHigh?: string;
  /** Shapes not seen when the model answered otherwise for a value of theirs: a confirmation never adds them. */
  fencedShapes?: string[];
  /** Fixed parts (slot-types.ts fixedPartOf: letters of an identifier, an email's domain) of values the model answered otherwise for: never served. */
  fencedParts?: string[];
}

/** The evidence a template carries. */
export interface TemplateState {
  slots: Slot[];
  /** Digests of the distinct bindings that confirmed it (at most MAX_BINDINGS). */
  bindings: string[];
  refuted: boolean;
  /** The order seen between ranged slots of one type (orders.ts); absent in templates learned before it was kept. */
  orders?: SlotOrder[];
}

export const MAX_VALUES = 16;
export const MAX_BINDINGS = 64;
/** The longest suffix (messages after the anchor) a template may span; also bounds the lookup. */
export const MAX_SUFFIX = 64;

/** Skeleton digests of messages, for lookup keys. */
export function skeletonDigests(parts: readonly Decomposed[]): string[] {
  return parts.map(skeletonDigest);
}

/** Each decomposed message's skeleton digest, once per Decomposed object (a shared one, decomposeOnce, is digested once). */
const digests = new WeakMap<Decomposed, string>();

function skeletonDigest(p: Decomposed): string {
  let d = digests.get(p);
  if (d === undefined) digests.set(p, (d = digest(p.skeleton)));
  return d;
}

/**
 * The lookup keys of a request, one per possible anchor h_k (k = n-1 down to
 * n-MAX_SUFFIX): H(h_k, skeletons of messages k+1..n). A template is found
 * only by a request whose suffix has exactly its skeletons. O(n) digests.
 */
export function lookupKeys(root: string, hashes: readonly string[], skeletons: readonly string[]): Array<{ depth: number; key: string }> {
  const keys: Array<{ depth: number; key: string }> = [];
  let suffix = "";
  for (let k = hashes.length - 1; k >= Math.max(0, hashes.length - MAX_SUFFIX); k--) {
    suffix = digest(`${skeletons[k]}\u0000${suffix}`);
    const anchor = k === 0 ? root : hashes[k - 1];
    keys.push({ depth: k, key: digest(`tpl\u0000${anchor}\u0000${suffix}`) });
  }
  return keys;
}

/** The id of a template: its lookup key and its pattern. */
export function templateId(lookupKey: string, pattern: TemplatePattern): string {
  return digest(
    `tplid\u0000${lookupKey}\u0000${canonicalJson({ s: pattern.suffix, a: [pattern.answer.skeleton, pattern.answer.refs, pattern.answer.finishReason] })}`,
  );
}

/** Slot values bound from a request, with the kind of leaf each came from. */
export interface Binding {
  values: string[];
  kinds: Array<"text" | "number">;
  /** Per slot, whether a leaf bound to it is a code (codes.ts isCodeLeaf): served only as a confirmed value. */
  codes?: boolean[];
}

/**
 * Matches request messages (the suffix, decomposed) against a pattern: same
 * skeletons, equal literals, one value per slot. Returns the slot values, or
 * null when the request does not fit, or when a slot's value is one group of a
 * number written in several tokens (`800` of `21,800`, leaves.ts isGroupedLeaf).
 */
export function bind(pattern: TemplatePattern, suffix: readonly Decomposed[], slotCount: number): Binding | null {
  if (suffix.length !== pattern.suffix.length) return null;
  const values: Array<string | undefined> = new Array(slotCount).fill(undefined);
  const kinds: Array<"text" | "number"> = new Array(slotCount).fill("text");
  const codes: boolean[] = new Array(slotCount).fill(false);
  for (let i = 0; i < suffix.length; i++) {
    const want = pattern.suffix[i];
    const got = suffix[i];
    if (want.skeleton !== got.skeleton || want.refs.length !== got.leaves.length) return null;
    for (let j = 0; j < want.refs.length; j++) {
      const ref = want.refs[j];
      const leaf = got.leaves[j];
      if (typeof ref === "string") {
        if (ref !== leaf.value) return null;
      } else if (typeof ref !== "number" || isGroupedLeaf(leaf)) return null;
      else if (values[ref] === undefined) {
        values[ref] = leaf.value;
        kinds[ref] = leaf.kind;
        codes[ref] = isCodeLeaf(leaf);
      } else if (values[ref] !== leaf.value) return null;
      else codes[ref] ||= isCodeLeaf(leaf);
    }
  }
  return values.every((v) => v !== undefined) ? { values: values as string[], kinds, codes } : null;
}

/**
 * Why a request that fits a pattern's skeletons does not bind, when a rule the user may not guess is why,
 * or null: a slot's value is one group of a number written in several tokens (`800` of `21,800`), a
 * slot the pattern uses twice holds two values, or a value the pattern holds fixed differs and the
 * request's is a quantity or a local date (`30kg`: never templated). Names the request's own value only, never the one the template holds.
 */
export function unboundReason(pattern: TemplatePattern, suffix: readonly Decomposed[]): string | null {
  if (suffix.length !== pattern.suffix.length) return null;
  let why: string | null = null;
  const seen: Array<string | undefined> = [];
  for (let i = 0; i < suffix.length; i++) {
    const want = pattern.suffix[i];
    const got = suffix[i];
    if (want.skeleton !== got.skeleton || want.refs.length !== got.leaves.length) return null;
    for (let j = 0; j < want.refs.length && why === null; j++) {
      const ref = want.refs[j];
      const leaf = got.leaves[j];
      const type = slotTypeOf(leaf.value, leaf.kind);
      if (typeof ref === "number" && seen[ref] !== undefined && seen[ref] !== leaf.value)
        why = `slot ${ref} appears twice, with ${quoted(seen[ref] ?? "")} and ${quoted(leaf.value)}: the template needs one value there`;
      else if (typeof ref === "number" && isGroupedLeaf(leaf))
        why = `slot ${ref} (${quoted(leaf.value)}, one group of a number written with separators): a grouped number is never templated`;
      else if (typeof ref === "string" && ref !== leaf.value && neverTemplated(type))
        why = `${quoted(leaf.value)} is a ${type}: never templated, and the template holds another value there`;
      if (typeof ref === "number") seen[ref] ??= leaf.value;
    }
  }
  return why;
}

/**
 * Whether a slot holds words (letters only: a status, a plan, a place, a
 * name): such a slot serves only values the request ties to an identity
 * (name-ties.ts), whatever type it was learned with.
 */
export function isWordSlot(slot: Slot): boolean {
  return (slot.type === "name" || slot.type === "word") && slot.values.every(isWordValue);
}

/**
 * Why bound values may not be served, in one line a user can act on: null
 * when every slot accepts its value (type, shape, range, and for a word, a
 * tie to an identity in the request: `tied`, the request's tiedWords). A
 * reason names the slot, the request's value and the rule (miss-reason.ts
 * slotLabel), never another request's value: a range is not spelled out.
 */
export function rejectReason(slots: readonly Slot[], binding: Binding, tied?: ReadonlySet<string>): string | null {
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    const value = binding.values[i];
    const type = slotTypeOf(value, binding.kinds[i]);
    const label = slotLabel(i, type, value);
    if (type !== slot.type)
      return neverTemplated(type) ? `${label}: a ${type} is never templated (the model may decide on it)` : `${label}: the slot holds ${slot.type}s`;
    if (isWordSlot(slot) && !tied?.has(value))
      return `${label} is a closed-class word (not tied to an email in the request); declare it if the model only copies it`;
    const shape = shapeOf(value);
    if (!slot.shapes.includes(shape))
      return slot.fencedShapes?.includes(shape)
        ? `${label}: the model answered otherwise for the shape ${shape}`
        : `${label} has the shape ${shape}, never confirmed (${slot.shapes.join(", ")})`;
    if (binding.codes?.[i] && !slot.values.includes(value))
      return `${label}: a code, never confirmed (digits after a label, a \`+\` or a mask, padded, quoted whole or three in parentheses, are closed-class)`;
    const part = partReason(slot, value);
    if (part) return `${label}: ${part}`;
    if (isRanged(slot.type)) {
      if (slot.min === undefined || slot.max === undefined) return `${label}: no confirmed range`;
      if (!Number.isFinite(rangedValue(slot.type, value))) return `${label} is not a valid ${slot.type}`;
      if (!inRange(slot.type, value, slot.min, slot.max))
        return `${label} is ${rangeSide(slot.type, value, slot.min, slot.max)} (${slot.values.length} values seen)`;
    }
  }
  return null;
}

/**
 * Why bound values may not be served because one equals a literal of the pattern (a leaf every binding
 * had, in the messages after the anchor or in the answer) that no confirmed value of its slot equalled,
 * or null: the savings account `AC-9999` every transfer went to says nothing of a transfer from it to
 * itself. Ranged slots are left to their ranges (a value equal to a literal inside the range was seen
 * on both sides of it).
 */
export function literalReason(pattern: TemplatePattern, slots: readonly Slot[], values: readonly string[]): string | null {
  const literals = new Set([...pattern.suffix, pattern.answer].flatMap((m) => m.refs.filter((r): r is string => typeof r === "string")));
  for (let i = 0; i < slots.length; i++) {
    if (!isRanged(slots[i].type) && literals.has(values[i]) && !slots[i].values.includes(values[i]))
      return `${slotLabel(i, slots[i].type, values[i])} equals a value the template holds fixed, never confirmed in this slot`;
  }
  return null;
}

/**
 * Why bound values may not be served by a template: a slot's (rejectReason), the order of two slots
 * (orders.ts) or a value equal to one of the pattern's literals (literalReason, given the pattern); null when they may.
 */
export function refusal(state: TemplateState, binding: Binding, tied?: ReadonlySet<string>, pattern?: TemplatePattern): string | null {
  return (
    rejectReason(state.slots, binding, tied) ??
    orderReason(state.slots, state.orders, binding.values) ??
    (pattern ? literalReason(pattern, state.slots, binding.values) : null)
  );
}

/** Why a template may not serve yet (refuted, too few bindings or values), or null when it has the evidence to. */
export function unconfirmedReason(state: TemplateState, minBindings: number): string | null {
  if (state.refuted) return "refuted: the model answered otherwise inside its range";
  if (state.bindings.length < minBindings) return `not yet confirmed: ${state.bindings.length} of ${minBindings} bindings`;
  const thin = state.slots.findIndex((s) => s.values.length < minBindings);
  return thin === -1 ? null : `not yet confirmed: slot ${thin} has ${state.slots[thin].values.length} of ${minBindings} distinct values`;
}

/** Whether the template has enough evidence to serve: k distinct bindings, and k distinct values in every slot. */
export function isConfirmed(state: TemplateState, minBindings: number): boolean {
  return unconfirmedReason(state, minBindings) === null;
}

/** Why a template's answer cannot be rendered for slot values (a derived leaf whose function does not apply), or null. */
export function derivedReason(pattern: TemplatePattern, values: readonly string[]): string | null {
  const ref = pattern.answer.refs.find((r) => isDerived(r) && leafValue(r, values) === null);
  return ref !== undefined && isDerived(ref)
    ? `slot ${ref.slot} (${quoted(values[ref.slot] ?? "")}): the answer holds \`${ref.fn}\` of it, which does not apply to this value`
    : null;
}

/** The value of one answer leaf for slot values, or null when a derived leaf's function does not apply to its value. */
function leafValue(ref: Ref, values: readonly string[]): string | null {
  if (typeof ref === "string") return ref;
  if (typeof ref === "number") return values[ref] ?? null;
  return isDerived(ref) ? applyTransform(ref.fn, values[ref.slot] ?? "") : null;
}

/** The answer a template renders for slot values, or null when a value cannot stand where the answer needs it. */
export function renderAnswer(pattern: TemplatePattern, values: readonly string[]): CanonicalMessage | null {
  const leaves = pattern.answer.refs.map((ref) => leafValue(ref, values));
  if (leaves.some((v) => v === null)) return null;
  const message = compose(pattern.answer.skeleton, leaves as string[]);
  return message && pattern.answer.envelope ? { ...message, ...pattern.answer.envelope } : message;
}

/** The digest of one binding (the slot values, in order). */
export function bindingDigest(values: readonly string[]): string {
  return digest(`binding\u0000${values.join("\u0000")}`);
}
