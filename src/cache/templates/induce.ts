import { canonicalJson } from "../../core/canonical";
import { envelopeOf, keptEnvelope, withEnvelope } from "../../core/envelope";
import { digest } from "../../core/hash";
import type { CanonicalMessage } from "../../core/messages";
import { decomposeOnce, isGroupedLeaf, type Decomposed } from "./leaves";
import {
  bindingDigest,
  lookupKeys,
  MAX_SUFFIX,
  skeletonDigests,
  templateId,
  type MessagePattern,
  type Ref,
  type Slot,
  type TemplatePattern,
  type TemplateState,
} from "./learned";
import { isWordValue, tiedWords } from "./name-ties";
import { ordersOf } from "./orders";
import { NoTemplate, SlotTable } from "./slot-table";
import { explainDerived, isDerived } from "./transforms";

/** One recorded generation: the request's path and the answer the model gave. */
export interface Trajectory {
  /** The tree id (h0). */
  root: string;
  /** h_1..h_n. */
  hashes: string[];
  /** The request's messages in hash form (canonical arguments). */
  messages: CanonicalMessage[];
  /**
   * The same messages as stored (tool-call arguments as the model wrote them), when known: an earlier
   * answer of the run becomes a template's answer in this form, so that it serves the model's bytes (turns.ts).
   */
  stored?: CanonicalMessage[];
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
 * skeletons everywhere, same answer skeleton and finish reason, and the same
 * closed-class words (every word of letters the request does not tie to an
 * identity, name-ties.ts: a status, a plan, a country): two runs that differ
 * in one never make a template, so they are not worth pairing.
 *
 * `parts`: the messages already decomposed (a caller that has them saves doing it again).
 */
export function shapeKeyOf(t: Trajectory, parts: readonly Decomposed[] = t.messages.map(decomposeOnce)): string {
  const answer = decomposeOnce(t.answer);
  const tied = tiedWords(t.messages);
  // canonicalJson([skeletons, answer.skeleton, finishReason, words]) from each message's memoized JSON (RFC 8785 of an array is its items' joined).
  const skeletons = `[${parts.map((p) => shapePartOf(p).skeleton).join(",")}]`;
  const words = `[${[...parts, answer].map((p) => wordsJson(shapePartOf(p), tied)).join(",")}]`;
  return digest(`shape\u0000${t.root}\u0000[${skeletons},${canonicalJson([answer.skeleton, t.meta.finishReason]).slice(1, -1)},${words}]`);
}

/** Per decomposed message (shared: decomposeOnce), its skeleton's canonical JSON, its text leaves that are words and their JSON. */
interface ShapePart {
  skeleton: string;
  words: string[];
  json: string;
}
const shapeParts = new WeakMap<Decomposed, ShapePart>();

function shapePartOf(p: Decomposed): ShapePart {
  let part = shapeParts.get(p);
  if (!part) {
    const words = p.leaves.filter((l) => l.kind === "text" && isWordValue(l.value)).map((l) => l.value);
    part = { skeleton: canonicalJson(p.skeleton), words, json: canonicalJson(words) };
    shapeParts.set(p, part);
  }
  return part;
}

/** The JSON of a message's words that the trajectory does not tie (the memoized JSON when it ties none of them). */
function wordsJson(part: ShapePart, tied: ReadonlySet<string>): string {
  return part.words.some((w) => tied.has(w)) ? canonicalJson(part.words.filter((w) => !tied.has(w))) : part.json;
}

function alignMessage(a: Decomposed, b: Decomposed, table: SlotTable): MessagePattern {
  if (a.skeleton !== b.skeleton || a.leaves.length !== b.leaves.length) throw new NoTemplate("the messages differ in shape");
  const refs: Ref[] = a.leaves.map((leaf, i) => {
    const other = b.leaves[i];
    if (leaf.kind !== other.kind) throw new NoTemplate(`\`${leaf.value}\` / \`${other.value}\` differ in kind`);
    if (leaf.value === other.value) return leaf.value;
    if (isGroupedLeaf(leaf) || isGroupedLeaf(other))
      throw new NoTemplate(`\`${leaf.value}\` is one group of a number written in several tokens: it cannot be ranged`);
    return table.slotFor(leaf.value, other.value, leaf.kind);
  });
  return { skeleton: a.skeleton, refs };
}

/**
 * Every leaf where the answers differ must be explained, at the same place in
 * both: a verbatim copy of one slot, or else one simple function of one slot
 * (transforms.ts). A copy explains a leaf before any function does: a leaf
 * that is a whole copy of a slot is never taken as derived from another.
 */
function alignAnswer(a: Decomposed, b: Decomposed, table: SlotTable): MessagePattern {
  if (a.skeleton !== b.skeleton || a.leaves.length !== b.leaves.length) throw new NoTemplate("the answers differ in shape");
  const refs: Ref[] = a.leaves.map((leaf, i) => {
    const other = b.leaves[i].value;
    if (leaf.value === other) return leaf.value;
    const slot = table.copied(leaf.value, other);
    if (slot !== undefined) return slot;
    const derived = explainDerived(table.slots, leaf.value, other);
    if ("reason" in derived) throw new NoTemplate(derived.reason);
    return derived;
  });
  return { skeleton: a.skeleton, refs };
}

/** The slots a pattern's refs name, copied or derived. */
function slotsOf(refs: readonly Ref[]): number[] {
  return refs.flatMap((r) => (typeof r === "number" ? [r] : isDerived(r) ? [r.slot] : []));
}

/**
 * Whether every slot is data the model demonstrably copies: an assistant
 * message (an earlier answer on the path, the answer itself, or, `later`, an
 * answer of the same run after this one: the leaf pairs at one place of each
 * later assistant message of both runs) holds it, verbatim or by a learned
 * function, after a message that is not the assistant's (user, system, tool)
 * gave it. A slot no answer copies is an input to a decision, so the pair
 * makes no template. Returns the first slot not copied, or -1.
 */
function firstUncopied(roles: readonly string[], patterns: readonly MessagePattern[], slots: Slot[], later: LaterAnswers): number {
  const given = new Set<number>();
  for (let i = 0; i < patterns.length; i++) {
    const refs = slotsOf(patterns[i].refs);
    if (roles[i] === "assistant") {
      for (const r of refs) if (given.has(r)) slots[r].copied = true;
    } else {
      for (const r of refs) given.add(r);
    }
  }
  const pairs = new Map(slots.map((s, i) => [`${s.values[0]}\u0000${s.values[1]}`, i]));
  for (let j = 0; j < later.a.length; j++) {
    const [la, lb] = [later.a[j].leaves, later.b[j].leaves];
    if (later.a[j].skeleton !== later.b[j].skeleton || la.length !== lb.length) continue;
    for (let p = 0; p < la.length; p++) {
      const r = pairs.get(`${la[p].value}\u0000${lb[p].value}`);
      if (r !== undefined && given.has(r)) slots[r].copied = true;
    }
  }
  return slots.findIndex((s) => !s.copied);
}

/** The assistant messages of both runs after the answer a template is induced for (in order, one per turn): where later copies count. */
export interface LaterAnswers {
  a: Decomposed[];
  b: Decomposed[];
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
 * Generalises two sibling trajectories of one tree into a template, or says
 * why not. The anchor is their deepest common node; every leaf that differs
 * after it becomes a slot, and must be identity-like (never a categorical or
 * closed-class word, slot-table.ts); every leaf where the answers differ must
 * copy one slot verbatim in both, or be one simple function of one slot; and
 * every slot must be copied by some answer of the run (firstUncopied), this
 * one, an earlier one or, given `later`, a later one.
 */
export function explainInduce(a: Trajectory, b: Trajectory, later: LaterAnswers = { a: [], b: [] }): { template: LearnedTemplate } | { reason: string } {
  const n = a.hashes.length;
  if (a.root !== b.root || n !== b.hashes.length || a.meta.finishReason !== b.meta.finishReason) return { reason: "different shapes" };
  let k = 0;
  while (k < n && a.hashes[k] === b.hashes[k]) k++;
  if (k === n) return { reason: "same request" };
  if (n - k > MAX_SUFFIX) return { reason: `the runs part ${n - k} messages back (at most ${MAX_SUFFIX})` };
  const table = new SlotTable(tiedWords(a.messages), tiedWords(b.messages));
  try {
    const all = a.messages.map((m, i) => (i < k ? { skeleton: "", leaves: [] } : decomposeOnce(m)));
    const suffix = all.slice(k).map((da, i) => alignMessage(da, decomposeOnce(b.messages[k + i]), table));
    const answer = alignAnswer(decomposeOnce(a.answer), decomposeOnce(b.answer), table);
    const roles = [...a.messages.slice(k).map((m) => m.role), "assistant"];
    const uncopied = firstUncopied(roles, [...suffix, answer], table.slots, later);
    if (uncopied !== -1) {
      const s = table.slots[uncopied];
      return { reason: `\`${s.values[0]}\` / \`${s.values[1]}\` is never copied by an answer of the run: an input to a decision` };
    }
    const envelope = sharedEnvelope(a.answer, b.answer);
    const pattern: TemplatePattern = { anchorDepth: k, suffix, answer: { ...answer, ...a.meta, ...(envelope ? { envelope } : {}) } };
    const lookupKey = lookupKeys(a.root, a.hashes, skeletonDigests(all)).find((x) => x.depth === k)?.key;
    if (!lookupKey || table.slots.length === 0) return { reason: "nothing varies" };
    // A date and a time of day in tokens of their own are one moment: ranged part by part, `2024-03-07 23:00` lies
    // inside ranges confirmed on `2024-03-05 23:00` and `2024-03-07 10:00` although it is after both.
    if (table.slots.some((s) => s.type === "time") && table.slots.some((s) => s.type === "date"))
      return { reason: "a date and a time of day vary in tokens of their own: one moment, which cannot be ranged part by part" };
    const bindingA = table.slots.map((s) => s.values[0]);
    const bindingB = table.slots.map((s) => s.values[1]);
    const state = {
      slots: table.slots,
      bindings: [bindingDigest(bindingA), bindingDigest(bindingB)],
      refuted: false,
      orders: ordersOf(table.slots, [bindingA, bindingB]),
    };
    return { template: { id: templateId(lookupKey, pattern), treeId: a.root, lookupKey, pattern, state } };
  } catch (error) {
    if (error instanceof NoTemplate) return { reason: error.message };
    throw error;
  }
}

/** explainInduce's template, or null. */
export function induce(a: Trajectory, b: Trajectory, later?: LaterAnswers): LearnedTemplate | null {
  const result = explainInduce(a, b, later);
  return "template" in result ? result.template : null;
}
