import { VARIABLES_FRAME_KEY } from "../../core/protocol";
import { canonicalArguments, canonicalJson, hashFormOf } from "../../core/canonical";
import { NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { keepEnvelope } from "../../core/envelope";
import { childHash, digest, treeIdOf, walk } from "../../core/hash";
import type { DeclaredKeying, RequestKey } from "../request-key";
import type { CanonicalMessage } from "../../core/messages";
import { annotated } from "./annotations";
import { ambiguityOf, distinctValues, type Bindings } from "./bindings";
import { jsonTexts, unboundEnvelope } from "./declared-envelope";
import { decompose } from "./leaves";
import { hasPlaceholderLike, renderArguments, renderMessage, substituteArguments, substituteMessage, textsOf } from "./placeholders";
import { slotTypeOf } from "./slot-types";
import { applyTransform, TRANSFORMS } from "./transforms";

export type { DeclaredKeying };

/**
 * Keys a request with declared variables: its messages with placeholders, in
 * a tree of its own whose frame names the variables. Null when the request
 * must be keyed concretely: a value too short or too common to be told apart
 * from ordinary text (bindings.ts ambiguityOf), two values that equal or
 * contain one another, or messages that already hold placeholder-like text.
 */
export function declaredKeying(
  tenant: string,
  namespace: string,
  frameJson: string,
  messages: readonly CanonicalMessage[],
  bindings: Bindings,
): DeclaredKeying | null {
  if (Object.values(bindings).some((v) => ambiguityOf(v) !== null)) return null;
  if (!distinctValues(bindings)) return null;
  if (messages.some(hasPlaceholderLike)) return null;
  const frame = { ...(JSON.parse(frameJson) as Record<string, unknown>), [VARIABLES_FRAME_KEY]: Object.keys(bindings).sort() };
  const declaredFrame = canonicalJson(frame);
  return {
    treeId: treeIdOf(tenant, namespace, declaredFrame),
    frameJson: declaredFrame,
    messages: messages.map((m) => substituteMessage(m, bindings, true)),
    bindings,
  };
}

/** A message in the form that is hashed: tool-call arguments in canonical JSON. */
export function hashForm(message: CanonicalMessage): CanonicalMessage {
  return hashFormOf(message);
}

/**
 * The request key in the declared tree for `key` with `bindings`, or null
 * when the request must stay in its concrete tree (see declaredKeying). Path
 * nodes are hashed in canonical form and keep the arguments' text as sent.
 */
export function withDeclared(key: RequestKey, bindings: Bindings): RequestKey | null {
  const keying = declaredKeying(
    key.tenant,
    key.namespace,
    key.frameJson,
    key.path.map((step) => hashForm(step.message)),
    bindings,
  );
  if (!keying) return null;
  const stored = keying.messages.map((m, i) => keepArgumentText(m, key.path[i].message, bindings));
  // The numbers the concrete key read written otherwise (`1.0`, src/core/number-text.ts) are keyed here too: the stored forms lose them.
  const hashed = key.numbers ? keying.messages.map((m, i) => withNumbers(m, key.numbers?.get(i))) : keying.messages;
  const path = walk(keying.treeId, hashed, stored);
  return { ...key, treeId: keying.treeId, frameJson: keying.frameJson, path, key: path[path.length - 1].hash, declared: keying };
}

/** `message` with the texts of its numbers written otherwise than JSON.stringify would, when it has any. */
function withNumbers(message: CanonicalMessage, numbers: readonly Spelling[] | undefined): CanonicalMessage {
  return numbers && numbers.length > 0 ? { ...message, [NUMBERS_KEY]: numbers } : message;
}

/** Per declared request: the id of an answer the model gave it that could not be stored (keyDeclaredAnswer). */
const unstored = new WeakMap<DeclaredKeying, string>();

/**
 * The id of the answer the model gave this declared request, when that answer could not be stored in the
 * declared tree (it holds a value the request does not, a derived form of a bound value, …): still an
 * answer the model gave this binding at this node, so it counts as another answer there (declaredRefusal:
 * the node then serves no new values), or undefined.
 */
export function unstoredAnswerOf(keying: DeclaredKeying): string | undefined {
  return unstored.get(keying);
}

/**
 * The model's answer keyed in a declared tree (abstracted), or null when it
 * must not be stored there. `answer` holds the tool-call arguments as the
 * model wrote them: the hash is taken over the canonical form, the stored
 * message keeps that text with placeholders put in place (see keepArgumentText).
 */
export function keyDeclaredAnswer(
  parent: string,
  answer: CanonicalMessage,
  keying: DeclaredKeying,
): { hash: string; json: string; message: CanonicalMessage } | null {
  const abstracted = abstractAnswer(hashForm(answer), keying);
  if (!abstracted) {
    unstored.set(keying, digest(`declared-unstored\u0000${parent}\u0000${canonicalJson(hashForm(answer))}`));
    return null;
  }
  // What the model sent around the message (src/core/envelope.ts) is stored with it, never hashed, but for the fields that carry a bound value.
  const stored = keepEnvelope(keepArgumentText(abstracted, answer, keying.bindings), unboundEnvelope(answer, keying.bindings));
  return { hash: childHash(parent, canonicalJson(abstracted)), json: canonicalJson(stored), message: stored };
}

/**
 * `abstracted` (a message keyed with placeholders, arguments canonical) with
 * each tool call's arguments taken from `original` with the same
 * placeholders put in place, so that a hit serves the model's key order,
 * spacing and escapes. A call keeps its canonical arguments unless the text
 * both parses to them and renders back to `original` byte for byte with
 * `bindings`: a bound value written with unusual escapes, or a number
 * written in a non-canonical form, is served as before (keys sorted).
 */
export function keepArgumentText(abstracted: CanonicalMessage, original: CanonicalMessage, bindings: Bindings): CanonicalMessage {
  const calls = abstracted.tool_calls;
  const raws = original.tool_calls;
  if (!calls || !raws || raws.length !== calls.length) return abstracted;
  let changed = false;
  const kept = calls.map((call, i) => {
    const raw = raws[i].function.arguments;
    const text = substituteArguments(raw, bindings);
    if (text === null || text === call.function.arguments) return call;
    if (canonicalArguments(text) !== call.function.arguments || renderArguments(text, bindings) !== raw) return call;
    changed = true;
    return { ...call, function: { ...call.function, arguments: text } };
  });
  return changed ? { ...abstracted, tool_calls: kept } : abstracted;
}

const DERIVABLE = new Set(["number", "identifier", "email", "date", "time", "local-date", "quantity"]);
const PLACEHOLDER_TEXT = /\{\{#?([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
/** Consecutive parts of a value joined into one form (`ada` + `lovelace` = `adalovelace`), at most this many. */
const MAX_JOINED_PARTS = 4;

/**
 * The case-folded forms in which a part of `value` can show up in an answer:
 * each run of letters or of digits, and up to four consecutive runs joined
 * (`Ada Lovelace` gives `ada`, `lovelace`, `adalovelace`; `A-1` gives `1`,
 * `a1`). A form of one or two letters (`a`, `io`) is too common in text to
 * count; a form with a digit always counts.
 */
export function derivedForms(value: string): Set<string> {
  const parts = value.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? [];
  const forms = new Set<string>();
  for (let i = 0; i < parts.length; i++) {
    let joined = "";
    for (let j = i; j < parts.length && j < i + MAX_JOINED_PARTS; j++) {
      joined += parts[j];
      if (/\p{N}/u.test(joined) || [...joined].length >= 3) forms.add(joined);
    }
  }
  return forms;
}

/** The case-folded words of text, and their runs of letters and of digits (`RF-12` gives `rf`, `12`; `lovelace12` gives it and `lovelace`, `12`). */
function wordsOf(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.flatMap((w) => [w, ...(w.match(/\p{L}+|\p{N}+/gu) ?? [])]);
}

/** The variables whose placeholders occur in some text. */
function placeholderNames(texts: readonly string[]): Set<string> {
  return new Set(texts.flatMap((t) => [...t.matchAll(PLACEHOLDER_TEXT)].map((m) => m[1])));
}

/**
 * The answer keyed in a declared tree (placeholders in, tool-call arguments
 * canonical: what is hashed), or null when it must not be stored there
 * because a value in it cannot be attributed:
 *
 * - the answer already holds placeholder-like text;
 * - a bound value is left over after whole-token substitution, in any case
 *   or JSON-escaped (inside a longer token, upper-cased, …), or is anywhere a
 *   placeholder does not go (untemplatedTexts: reasoning, annotations, a call's function name);
 * - a word of what is left is a derived form of a bound value (derivedForms:
 *   `Ada` from `ada@example.com`, `ada-lovelace` from `Ada Lovelace`, `1`
 *   from `A-1`), case aside: another binding would need another word;
 * - it has `annotations` (offsets into its text) and a placeholder in its text;
 * - it names a variable whose value the keyed request does not contain;
 * - it holds a number, id, email or date that the keyed request does not
 *   contain: it may be derived from a variable (`1999` -> `19.99`); unless
 *   one simple function gives it from a value the keyed request holds as it
 *   is (derivedFromKnown).
 */
export function abstractAnswer(answer: CanonicalMessage, keying: DeclaredKeying): CanonicalMessage | null {
  if (hasPlaceholderLike(answer)) return null;
  const stored = substituteMessage(answer, keying.bindings);
  // Annotations point into the text by offsets (`url_citation.start_index`): another value's length would move it under them.
  if (annotated(stored) && placeholderNames([stored.content, stored.refusal].flat().filter((t) => typeof t === "string")).size > 0) return null;
  const rest = [...textsOf(stored), ...untemplatedTexts(stored)]
    .map((t) => t.replace(/\{\{#?[A-Za-z_][A-Za-z0-9_]*\}\}/g, "\u0000"))
    .join("\u0000")
    .toLowerCase();
  for (const value of Object.values(keying.bindings)) {
    const escaped = JSON.stringify(value).slice(1, -1);
    if (rest.includes(value.toLowerCase()) || rest.includes(escaped.toLowerCase())) return null;
  }
  const forms = new Set(Object.values(keying.bindings).flatMap((v) => [...derivedForms(v)]));
  if (wordsOf(rest).some((w) => forms.has(w))) return null;
  const given = placeholderNames(keying.messages.flatMap(textsOf));
  for (const name of placeholderNames(textsOf(stored))) if (!given.has(name)) return null;
  const known = new Set(keying.messages.flatMap((m) => decompose(m).leaves.map((l) => l.value)));
  for (const leaf of decompose(stored).leaves) {
    if (DERIVABLE.has(slotTypeOf(leaf.value, leaf.kind)) && !known.has(leaf.value) && !derivedFromKnown(leaf.value, known)) return null;
  }
  return stored;
}

/**
 * Every string and object key of an answer outside the texts a placeholder goes in (content, refusal, a call's
 * arguments): `reasoning_content`, `annotations`, a call's function name and its fields besides its id and type,
 * any other field the model sent. They are served as recorded, never rendered, so a bound value in one would be
 * served to every other binding (the model's reasoning naming the first customer; the tool it picked by the
 * value, `billing_assign` for the team `billing`).
 */
function untemplatedTexts(message: CanonicalMessage): string[] {
  const { content: _content, refusal: _refusal, role: _role, tool_calls: calls, ...rest } = message;
  const callRests = (calls ?? []).map(({ id: _id, type: _type, function: { name, arguments: _arguments, ...fn }, ...call }) => [name, call, fn]);
  return jsonTexts([rest, callRests]);
}

/**
 * Whether a value is one simple function (transforms.ts) of a value the keyed
 * request holds as it is (not a placeholder): `15.00` for a tool result's
 * `amount_cents: 1500`. The request is keyed with that value, so the answer
 * stored under it is exact; a learned template in the declared tree may then
 * learn the function from evidence.
 */
function derivedFromKnown(value: string, known: ReadonlySet<string>): boolean {
  for (const k of known) if (!k.includes("{{") && TRANSFORMS.some((fn) => applyTransform(fn, k) === value)) return true;
  return false;
}

/**
 * Renders a stored declared answer with the request's values; null (a miss)
 * when it cannot be. Tool-call arguments are rendered in place, in the key
 * order they were stored with.
 */
export function renderDeclared(stored: CanonicalMessage, keying: DeclaredKeying): CanonicalMessage | null {
  return renderMessage(stored, keying.bindings);
}

/**
 * The digest of the values a declared request holds: the variables whose
 * placeholder occurs in its keyed messages, with their values. A declared
 * value the messages never contain changes no digest, so it can never pass
 * for a second, confirming binding.
 */
export function bindingDigestOf(keying: DeclaredKeying): string {
  const used = [...placeholderNames(keying.messages.flatMap(textsOf))].sort();
  return digest(`declared-binding\u0000${canonicalJson(used.map((name) => [name, keying.bindings[name] ?? null]))}`);
}

/** One piece of evidence for a declared answer: the model answered `answer` (its node hash) for the binding with this digest. */
export interface DeclaredConfirmation {
  answer: string;
  binding: string;
  /** A row that could not be read back: what the model answered there, and for which binding, is unknown. */
  damaged?: true;
}

/**
 * Whether a stored declared answer may be served to a binding, given the
 * evidence recorded at its node (every answer the model gave there, each with
 * the binding it was given for):
 * - for the binding it was recorded with, it serves (an exact repeat);
 * - for other values, only when the model gave no other answer at the node
 *   and at least `minBindings` distinct bindings got this very answer (the
 *   answer rendered with their values equals what the model said for them).
 *
 * @example declaredServes([{ answer: "h", binding: "b1" }], "h", "b2", 2) // => false
 */
export function declaredServes(evidence: readonly DeclaredConfirmation[], answer: string, binding: string, minBindings: number): boolean {
  return declaredRefusal(evidence, answer, binding, minBindings) === null;
}

/** Why a stored declared answer may not be served to a binding (declaredServes), in one line, or null when it may. */
export function declaredRefusal(evidence: readonly DeclaredConfirmation[], answer: string, binding: string, minBindings: number): string | null {
  if (evidence.some((e) => e.answer === answer && e.binding === binding && !e.damaged)) return null;
  // In doubt, miss: a damaged row may be the model answering this node otherwise.
  if (evidence.some((e) => e.damaged)) return "declared answer: damaged evidence at this node";
  if (evidence.some((e) => e.answer !== answer)) return "declared answer: the model answered this node two ways for two bindings";
  const seen = new Set(evidence.map((e) => e.binding)).size;
  return seen >= minBindings ? null : `declared answer not yet confirmed: ${seen} of ${minBindings} bindings`;
}
