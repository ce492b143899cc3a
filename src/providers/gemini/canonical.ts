import { canonicalJson, type CanonicalError } from "../../core/canonical";
import { onlyFields } from "../../core/fields";
import { CallIds } from "../responses/canonical";
import type { CanonicalPart, Content, GeminiNode, Part } from "./schema";

export type GeminiCanonical = { ok: true; hashed: GeminiNode[]; stored: GeminiNode[]; ids: CallIds } | { ok: false; error: CanonicalError };

type Fail = CanonicalError;
const uncacheable = (reason: string): Fail => ({ kind: "uncacheable", reason });
const isFail = (value: unknown): value is Fail => typeof value === "object" && value !== null && "kind" in value;

/**
 * Part kinds the upstream runs or the cache cannot replay: images, files, code execution. A thought
 * summary (`{text, thought: true}`, with `includeThoughts`) is a text part: its flag and signature are
 * keyed with its text, recorded and served as the model sent them.
 */
const UNCACHEABLE = ["inlineData", "fileData", "executableCode", "codeExecutionResult", "videoMetadata", "toolCall", "toolResponse"].flatMap((name) => [
  name,
  // The proto name, which Google reads too (`file_data`): a part that spells it so is not a text part.
  name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
]);

/** The fields of a content the node keeps. */
const CONTENT_FIELDS: ReadonlySet<string> = new Set(["role", "parts"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The fields of a call or response object the canonical form does not read (`willContinue`, `scheduling`, …), kept in the key; null ones dropped. */
function nonNull(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)) out[k] = v;
  return out;
}

/** The part's fields other than `known`, null ones dropped (`thoughtSignature` and unknown fields stay keyed). */
function extras(p: Part, known: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) if (k !== known && v !== null && v !== undefined) out[k] = v;
  return out;
}

/**
 * One part in both forms. An empty text part is left out of the hash (`hashed: null`) and stored as sent, so
 * that a hit serves it; a call without `args` (Gemini omits them for a call with no parameters) is hashed with
 * `args: {}` and stored without them.
 */
function canonicalPart(p: Part, ids: CallIds, where: string): { hashed: CanonicalPart | null; stored: CanonicalPart } | Fail {
  const found = UNCACHEABLE.find((k) => p[k] !== undefined && p[k] !== null && p[k] !== false);
  if (found) return uncacheable(`${found} part`);
  if (typeof p.text === "string") {
    if (p.text === "" && Object.keys(extras(p, "text")).length === 0) return { hashed: null, stored: { text: "" } };
    const node = { ...extras(p, "text"), text: p.text };
    return { hashed: node, stored: node };
  }
  if (isObject(p.functionCall)) {
    const { name, id, args, ...other } = p.functionCall;
    if (typeof name !== "string" || name === "") return { kind: "invalid", message: `${where}.functionCall needs a name`, param: `${where}.functionCall.name` };
    const call: { name: string; id?: string } = { ...nonNull(other), name };
    if (typeof id === "string" && id !== "") call.id = ids.assign(id);
    const rest = extras(p, "functionCall");
    const hashed = { ...rest, functionCall: { ...call, args: args ?? {} } };
    const stored = { ...rest, functionCall: args === undefined ? call : { ...call, argsJson: JSON.stringify(args) } };
    return { hashed, stored };
  }
  if (isObject(p.functionResponse)) {
    const { name, id, response, ...other } = p.functionResponse;
    if (typeof name !== "string" || name === "")
      return { kind: "invalid", message: `${where}.functionResponse needs a name`, param: `${where}.functionResponse.name` };
    // Multimodal results (inlineData, fileData) are not text: the model judges.
    if (Array.isArray(other.parts) && other.parts.length > 0) return uncacheable("functionResponse parts");
    const out: { name: string; id?: string; response: unknown } = { ...nonNull(other), name, response: response ?? {} };
    if (typeof id === "string" && id !== "") {
      const ordinal = ids.lookup(id);
      // The call is not in this request: the model judges, the cache steps aside.
      if (!ordinal) return uncacheable("functionResponse without its functionCall in the contents");
      out.id = ordinal;
    }
    const node = { ...extras(p, "functionResponse"), functionResponse: out };
    return { hashed: node, stored: node };
  }
  return uncacheable("unknown part");
}

/** One content in both forms: `role` defaults to `user`; function-call ids become ordinals. */
export function canonicalContent(c: Content, ids: CallIds, where: string): { hashed: GeminiNode; stored: GeminiNode } | Fail {
  const role = c.role ?? "user";
  // Earlier Gemini clients send a function's result as role `function`; the API still takes it. Not a role the tree keeps: the model answers it.
  if (role === "function") return uncacheable("role function");
  if (role !== "user" && role !== "model") return { kind: "invalid", message: `${where}.role must be user or model`, param: `${where}.role` };
  // A content field besides role and parts is not one the node keeps: pass it to the model rather than drop it from the key.
  if (!onlyFields(c, CONTENT_FIELDS)) return uncacheable("content with other fields");
  const hashed: CanonicalPart[] = [];
  const stored: CanonicalPart[] = [];
  for (let i = 0; i < c.parts.length; i++) {
    const out = canonicalPart(c.parts[i], ids, `${where}.parts[${i}]`);
    if (isFail(out)) return out;
    if (out.hashed !== null) hashed.push(out.hashed);
    stored.push(out.stored);
  }
  // Only empty text parts: stored with no parts, as hashed (an answer with nothing else is not recorded).
  return { hashed: { role, parts: hashed }, stored: { role, parts: hashed.length === 0 ? [] : stored } };
}

/** Canonicalises `contents`, numbering function-call ids in order of appearance. */
export function canonicalContents(contents: readonly Content[]): GeminiCanonical {
  const ids = new CallIds();
  const hashed: GeminiNode[] = [];
  const stored: GeminiNode[] = [];
  for (let i = 0; i < contents.length; i++) {
    const out = canonicalContent(contents[i], ids, `contents[${i}]`);
    if (isFail(out)) return { ok: false, error: out };
    hashed.push(out.hashed);
    stored.push(out.stored);
  }
  return { ok: true, hashed, stored, ids };
}

export { canonicalJson };
