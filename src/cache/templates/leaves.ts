import { canonicalJson } from "../../core/canonical";
import { ENVELOPE_KEYS } from "../../core/envelope";
import type { CanonicalMessage, CanonicalToolCall } from "../../core/messages";
import { markCodes, markWholeString } from "./codes";
import { markPercents } from "./readings";

/**
 * A message broken into its skeleton (roles, names, JSON structure, the
 * separators between tokens) and its leaves (the tokens and JSON numbers, in
 * order). Two messages whose skeletons are equal differ only in leaves.
 * `compose(skeleton, leaves)` gives the message back exactly, but for its
 * envelope keys (src/core/envelope.ts), which are no part of either.
 */
export interface Decomposed {
  skeleton: string;
  leaves: Leaf[];
}

/** One leaf: a token of text (`text`), or a number: a JSON number (canonical form) or a decimal a `%` follows in text (readings.ts). */
export interface Leaf {
  value: string;
  kind: "text" | "number";
}

/**
 * Characters that make up a token. Joiners (`-` `.` `@` `/` `+` `:` `#`) count only between them. An amount grouped
 * with commas and written with a decimal point (`4,250.00`, `1,000,250.75`) is one token, a number (slot-types.ts):
 * read as the groups `4` and `250.00`, which never vary, it made no template. It is one token only where it stands
 * alone: not glued to a token before or after it (`x-4,250.00`, `4,250.00EUR`, `4,250.00.5` keep their groups).
 */
const TOKEN =
  /(?<![\p{L}\p{N}_]|[\p{L}\p{N}_][-.@/+:#,])[1-9]\d{0,2}(?:,\d{3})+\.\d+(?![\p{L}\p{N}_]|[-.@/+:#,][\p{L}\p{N}_])|[\p{L}\p{N}_]+(?:[-.@/+:#][\p{L}\p{N}_]+)*/gu;

type TextSk = ["t", ...string[]];
/** JSON text that is not in canonical form, kept as text: it must still parse once composed. */
type RawJsonSk = ["r", ...string[]];
type JsonSk = TextSk | ["n"] | ["v", boolean | null] | ["a", ...unknown[]] | ["o", ...Array<[string, unknown]>];
type ArgsSk = ["j", JsonSk] | TextSk | RawJsonSk;
interface CallSk {
  id: string;
  name: string;
  args: ArgsSk;
  /** A tool call's other fields (and its function's), whole. */
  extra?: { call: Record<string, unknown>; fn: Record<string, unknown> };
}

function extraOf(call: CanonicalToolCall): { extra?: NonNullable<CallSk["extra"]> } {
  const { id: _id, type: _type, function: fn, ...rest } = call;
  const { name: _name, arguments: _args, ...fnRest } = fn;
  return Object.keys(rest).length + Object.keys(fnRest).length > 0 ? { extra: { call: rest, fn: fnRest } } : {};
}
interface MessageSk {
  role: string;
  name?: string;
  tool_call_id?: string;
  content?: TextSk | TextSk[];
  refusal?: TextSk;
  tool_calls?: CallSk[];
  /** Every other field (null ones included), structural: a template never varies it. */
  extra?: Record<string, unknown>;
}

/** The fields `decompose` splits into leaves; any other is kept whole in the skeleton. */
const SPLIT_FIELDS = new Set(["role", "name", "tool_call_id", "content", "refusal", "tool_calls"]);

/** Splits text into separators and tokens: `["t", sep0, sep1, ...]` with one token between each two separators. */
function splitText(text: string, leaves: Leaf[]): TextSk {
  return splitTagged("t", text, leaves) as TextSk;
}

/**
 * Leaves that are one group of a number written in several tokens (`21,800`, `21 800`, `21.800,00`,
 * `19,99`): the leaf is not the number, so neither its range nor its order with another slot says
 * anything about the number's. Such a leaf never varies in a template (induce.ts, learned.ts bind).
 */
const groupedLeaves = new WeakSet<Leaf>();
/** A mark that groups digits with no space: `21,800`, `19,99`, `21'800`. */
const GROUP_MARK = /^[,'\u2019]$/;
/** A space that groups thousands: `21 800` (also no-break and thin spaces). */
const GROUP_SPACE = /^[ \u00a0\u2009\u202f]$/;

/** An hour, maybe with minutes and seconds, and the AM or PM that follows it (`1:30 PM`, `11 p.m.`). */
const HOUR = /^\d{1,2}(?:[:.]\d{2}){0,2}$/;
const MERIDIEM = /^[ap]\.?m$/i;

/**
 * Whether two tokens are one value: groups of a number (`21,800`), or an hour on a 12-hour clock and its
 * AM or PM (`11:00 PM` is 23:00, yet as a time of day `11:00` lies between `1:30` and `12:30`: a booking
 * at 11 PM was served the one confirmed at 1:30, 4:00 and 12:30 PM).
 */
function groupsDigits(before: string, separator: string, after: string): boolean {
  if (HOUR.test(before) && /^\s*$/.test(separator) && MERIDIEM.test(after)) return true;
  if (!/^\d+(?:[.,]\d+)*$/.test(before) || !/^\d+$/.test(after)) return false;
  return GROUP_MARK.test(separator) || (GROUP_SPACE.test(separator) && after.length === 3);
}

/** Whether a leaf is one group of a number written in several tokens (`800` of `21,800`): it may never vary. */
export function isGroupedLeaf(leaf: Leaf): boolean {
  return groupedLeaves.has(leaf);
}

function splitTagged(tag: "t" | "r", text: string, leaves: Leaf[]): TextSk | RawJsonSk {
  const sk: TextSk | RawJsonSk = [tag];
  let last = 0;
  let previous: Leaf | undefined;
  const first = leaves.length;
  for (const match of text.matchAll(TOKEN)) {
    const separator = text.slice(last, match.index);
    sk.push(separator);
    const leaf: Leaf = { value: match[0], kind: "text" };
    if (previous && groupsDigits(previous.value, separator, leaf.value)) {
      groupedLeaves.add(previous);
      groupedLeaves.add(leaf);
    }
    leaves.push(leaf);
    previous = leaf;
    last = match.index + match[0].length;
  }
  sk.push(text.slice(last));
  markCodes(sk.slice(1) as string[], leaves.slice(first));
  markPercents(sk.slice(1) as string[], leaves.slice(first));
  return sk;
}

function splitJson(value: unknown, leaves: Leaf[]): JsonSk {
  if (typeof value === "string") {
    const sk = splitText(value, leaves);
    markWholeString(value, leaves[leaves.length - 1]);
    return sk;
  }
  if (typeof value === "number") {
    leaves.push({ value: canonicalJson(value), kind: "number" });
    return ["n"];
  }
  if (value === null || typeof value === "boolean") return ["v", value];
  if (Array.isArray(value)) return ["a", ...value.map((item) => splitJson(item, leaves))];
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .map((key): [string, JsonSk] => [key, splitJson((value as Record<string, unknown>)[key], leaves)]);
  return ["o", ...entries];
}

function splitArgs(raw: string, leaves: Leaf[]): ArgsSk {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return splitText(raw, leaves);
  }
  // Arguments that are not in canonical form stay text, so that they come back byte for byte.
  return canonicalJson(parsed) === raw ? ["j", splitJson(parsed, leaves)] : splitTagged("r", raw, leaves);
}

/** Breaks a canonical message into skeleton and leaves. */
export function decompose(message: CanonicalMessage): Decomposed {
  const leaves: Leaf[] = [];
  const sk: MessageSk = { role: message.role };
  if (message.name !== undefined) sk.name = message.name;
  if (message.tool_call_id !== undefined) sk.tool_call_id = message.tool_call_id;
  if (typeof message.content === "string" || Array.isArray(message.content)) {
    sk.content = Array.isArray(message.content) ? message.content.map((part) => splitText(part, leaves)) : splitText(message.content, leaves);
  }
  if (typeof message.refusal === "string") sk.refusal = splitText(message.refusal, leaves);
  if (message.tool_calls !== undefined) {
    sk.tool_calls = message.tool_calls.map((call) => ({
      id: call.id,
      name: call.function.name,
      args: splitArgs(call.function.arguments, leaves),
      ...extraOf(call),
    }));
  }
  // The envelope (what the upstream sent around the message) is not the message: splitEnvelope, src/core/envelope.ts.
  const extra = Object.entries(message).filter(([k, v]) => !ENVELOPE_KEYS.has(k) && (!SPLIT_FIELDS.has(k) || v === null));
  if (extra.length > 0) sk.extra = Object.fromEntries(extra);
  return { skeleton: canonicalJson(sk), leaves };
}

/** decomposeOnce's memo: one decomposition per message object. */
const decomposed = new WeakMap<CanonicalMessage, Decomposed>();

/**
 * `decompose`, once per message object (learning decomposes the same messages again and again: a
 * trajectory's suffix per template weighed, per partner paired, per earlier turn; its skeleton's RFC 8785
 * JSON is the costly part). The result is shared, so it is frozen: a caller never changes it, and a
 * message is never changed once parsed, so the memo never changes the result.
 */
export function decomposeOnce(message: CanonicalMessage): Decomposed {
  let parts = decomposed.get(message);
  if (!parts) {
    parts = decompose(message);
    Object.freeze(parts.leaves);
    decomposed.set(message, Object.freeze(parts));
  }
  return parts;
}

/** Thrown inside compose when a value cannot stand where it is asked to. */
class ComposeError extends Error {}

class LeafReader {
  private next = 0;
  constructor(private readonly values: readonly string[]) {}
  take(): string {
    if (this.next >= this.values.length) throw new ComposeError("too few leaves");
    return this.values[this.next++];
  }
  done(): boolean {
    return this.next === this.values.length;
  }
}

/** A JSON number leaf must be a number in canonical form, or the composed JSON would change meaning. */
export function isCanonicalNumber(value: string): boolean {
  if (!/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(value)) return false;
  const n = Number(value);
  return Number.isFinite(n) && canonicalJson(n) === value;
}

function joinText(sk: TextSk | RawJsonSk, reader: LeafReader): string {
  let out = sk[1];
  for (let i = 2; i < sk.length; i++) out += reader.take() + sk[i];
  return out;
}

function joinJson(sk: JsonSk, reader: LeafReader): unknown {
  switch (sk[0]) {
    case "t":
      return joinText(sk, reader);
    case "n": {
      const value = reader.take();
      if (!isCanonicalNumber(value)) throw new ComposeError(`not a JSON number: ${value}`);
      return Number(value);
    }
    case "v":
      return sk[1];
    case "a":
      return (sk.slice(1) as JsonSk[]).map((item) => joinJson(item, reader));
    case "o": {
      const out: Record<string, unknown> = {};
      for (const [key, value] of sk.slice(1) as Array<[string, JsonSk]>) out[key] = joinJson(value, reader);
      return out;
    }
  }
}

function joinArgs(sk: ArgsSk, reader: LeafReader): string {
  if (sk[0] === "j") return canonicalJson(joinJson(sk[1], reader));
  const text = joinText(sk, reader);
  if (sk[0] === "r") {
    try {
      JSON.parse(text);
    } catch {
      throw new ComposeError("JSON arguments no longer parse");
    }
  }
  return text;
}

/**
 * Rebuilds a message from its skeleton and leaf values (JSON strings are
 * escaped by serialisation). Null when the values do not fit: a wrong count,
 * or a JSON number slot given something that is not a canonical number.
 */
export function compose(skeleton: string, values: readonly string[]): CanonicalMessage | null {
  const sk = JSON.parse(skeleton) as MessageSk;
  const reader = new LeafReader(values);
  try {
    const out: CanonicalMessage = { role: sk.role };
    if (sk.content !== undefined) {
      out.content = typeof sk.content[0] === "string" ? joinText(sk.content as TextSk, reader) : (sk.content as TextSk[]).map((part) => joinText(part, reader));
    }
    if (sk.name !== undefined) out.name = sk.name;
    if (sk.refusal !== undefined) out.refusal = joinText(sk.refusal, reader);
    if (sk.tool_calls !== undefined) {
      out.tool_calls = sk.tool_calls.map(
        (call): CanonicalToolCall => ({
          ...call.extra?.call,
          id: call.id,
          type: "function",
          function: { ...call.extra?.fn, name: call.name, arguments: joinArgs(call.args, reader) },
        }),
      );
    }
    if (sk.extra) Object.assign(out, sk.extra);
    if (sk.tool_call_id !== undefined) out.tool_call_id = sk.tool_call_id;
    return reader.done() ? out : null;
  } catch (error) {
    if (error instanceof ComposeError) return null;
    throw error;
  }
}
