import { API_FRAME_KEY } from "../../core/protocol";
import { isAssistantItem } from "../../providers/responses/canonical";
import { previousResponseIdOf } from "../../providers/responses/resolve";
import type { InputItem, ResponsesRequest } from "../../providers/responses/schema";
import { fieldPath, type Json, type Segment } from "./compare";

/**
 * A miss's differing field named as the request wrote it (docs/api.md, "Why it missed"): `messages[i]` on Chat
 * Completions and Messages, `input[i]` on Responses, `contents[i]` on Gemini, with the index of the request's own
 * item, not of the canonical message (a Responses run of reasoning items and calls is one message, consecutive
 * Gemini model contents are one). Inside an item the canonical form's path is mapped back: a string `content` is
 * `content`, not `content[0].text`; a list counts the parts the canonical form left out (empty text). A position
 * that cannot be mapped exactly is written `[*]`, never as a guessed index. Pure.
 */

/** Names the first differing field of a miss: in canonical message `index` (`message`, its canonical JSON), or in the frame. */
export interface FieldNames {
  message(index: number, segments: readonly Segment[], message: Json): string;
  frame(segments: readonly Segment[]): string;
}

type Api = "chat" | "responses" | "messages" | "gemini";
type Obj = { [key: string]: unknown };

const API_OF_FRAME: Record<string, Api> = { "openai-responses": "responses", anthropic: "messages", gemini: "gemini" };
const CONTAINER: Record<Api, string> = { chat: "messages", messages: "messages", responses: "input", gemini: "contents" };
const TEXT_TYPES = new Set(["text", "input_text", "output_text"]);

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const join = (base: string, segments: readonly Segment[]) => segments.reduce<string>((path, s) => fieldPath(path, s), base);
/** A path whose positions are not known: every index `[*]`. */
const starred = (base: string, segments: readonly Segment[]) => segments.reduce<string>((p, s) => (typeof s === "number" ? `${p}[*]` : fieldPath(p, s)), base);

/** Which API a frame is: its `muscle-mem:api` (none: Chat Completions). */
export function apiOfFrame(frame: Json): Api {
  const api = isObj(frame) ? frame[API_FRAME_KEY] : undefined;
  return (typeof api === "string" && API_OF_FRAME[api]) || "chat";
}

/** A string holding JSON, parsed (the comparison reads such strings as JSON); anything else as it is. */
function unwrapped(value: unknown): unknown {
  if (typeof value !== "string" || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/**
 * `segments` walked in `value` as far as it holds them (the first one it lacks named too, when its container is
 * of the kind the segment names); `renames` maps a canonical key to the request's (`argsJson` → `args`).
 */
function tail(value: unknown, segments: readonly Segment[], renames: Record<string, string> = {}): Segment[] {
  const out: Segment[] = [];
  let at = value;
  for (const segment of segments) {
    at = unwrapped(at);
    if (typeof segment === "number") {
      if (!Array.isArray(at)) break;
      out.push(segment);
      at = at[segment];
    } else {
      if (!isObj(at)) break;
      const key = !(segment in at) && renames[segment] && renames[segment] in at ? renames[segment] : segment;
      out.push(key);
      at = at[key];
    }
    if (at === undefined) break;
  }
  return out;
}

/** The request index of a canonical list's `n`th element, when `kept` says which the canonical form kept. */
function nthKept(list: readonly unknown[], n: number, kept: (element: unknown) => boolean): number | null {
  let seen = -1;
  for (let i = 0; i < list.length; i++) if (kept(list[i]) && ++seen === n) return i;
  return null;
}

/** An element the canonical form keeps: anything but an empty text part or block. */
const notEmptyText = (e: unknown) => !(isObj(e) && typeof e.type === "string" && TEXT_TYPES.has(e.type) && e.text === "");

/**
 * `key[j]…` of a canonical list whose request form is a string (one text part: `key` and the JSON inside it) or a
 * list with empty text parts left out. `inner`: the rest inside the request's element.
 */
function inList(item: Obj, key: string, segments: readonly Segment[], inner: (element: unknown, rest: readonly Segment[]) => Segment[]): Segment[] {
  const value = item[key];
  const [, j, ...rest] = segments;
  if (typeof value === "string") return j === 0 && rest[0] === "text" ? [key, ...tail(value, rest.slice(1))] : [key];
  if (!Array.isArray(value) || typeof j !== "number") return [key];
  const at = nthKept(value, j, notEmptyText);
  return at === null ? [key] : [key, at, ...inner(value[at], rest)];
}

/** Chat Completions: content as a string or text parts (canonical: a string, or a list of the parts' texts); a refusal part or field. */
function chatItem(item: Obj, segments: readonly Segment[], canonical: Json): Segment[] {
  const parts = Array.isArray(item.content) ? (item.content as unknown[]) : null;
  const texts = parts ? parts.flatMap((p, i) => (isObj(p) && p.type === "text" ? [i] : [])) : [];
  if (segments[0] === "content" && parts) {
    // One text is canonical as a string (what follows is inside its JSON), several as a list of their texts.
    const several = isObj(canonical) && Array.isArray(canonical.content);
    const [, j, ...rest] = segments;
    if (several && typeof j === "number" && texts[j] !== undefined) return ["content", texts[j], "text", ...tail(parts[texts[j]], ["text", ...rest]).slice(1)];
    if (!several && texts.length === 1) return ["content", texts[0], ...tail(parts[texts[0]], ["text", ...segments.slice(1)])];
    return ["content"];
  }
  if (segments[0] === "refusal" && !("refusal" in item) && parts) {
    const at = parts.findIndex((p) => isObj(p) && p.type === "refusal");
    if (at >= 0) return ["content", at, "refusal"];
  }
  return tail(item, segments);
}

/** Messages: content blocks (a string is one text block; empty text blocks left out), a tool_result's content likewise. */
function messagesItem(item: Obj, segments: readonly Segment[]): Segment[] {
  if (segments[0] !== "content") return tail(item, segments);
  return inList(item, "content", segments, (block, rest) => (isObj(block) && rest[0] === "content" ? messagesItem(block, rest) : tail(block, rest)));
}

/** A Responses input item: content parts, a function output (a string or parts: canonical, their texts), `type` for the canonical `role`. */
function responsesItem(item: Obj, segments: readonly Segment[]): Segment[] {
  if (segments[0] === "content") return inList(item, "content", segments, (part, rest) => tail(part, rest));
  if (segments[0] === "output" && Array.isArray(item.output) && typeof segments[1] === "number") {
    const at = nthKept(item.output, segments[1], notEmptyText);
    const part = at === null ? null : item.output[at];
    if (at === null || !isObj(part)) return ["output"];
    return ["output", at, part.type === "refusal" ? "refusal" : "text", ...tail(part.text ?? part.refusal, segments.slice(2))];
  }
  return tail(item, segments, { role: "type", custom: "type" });
}

/** The request items each canonical message came from; null when they cannot be told (a resolved `previous_response_id`). */
function groupsOf(api: Api, items: readonly unknown[], body: unknown): number[][] | null {
  const groups: number[][] = [];
  if (api === "responses" && previousResponseIdOf(body as ResponsesRequest) !== null) return null;
  const merges = (prev: unknown, item: unknown) =>
    api === "responses"
      ? isAssistantItem(prev as InputItem) && isAssistantItem(item as InputItem)
      : api === "gemini" && isObj(prev) && isObj(item) && prev.role === "model" && item.role === "model";
  items.forEach((item, i) => {
    if (i > 0 && merges(items[i - 1], item)) groups[groups.length - 1].push(i);
    else groups.push([i]);
  });
  return groups;
}

/** A Gemini content group's parts: each canonical part's place (content, part), when the group's parts map one to one. */
function geminiPart(items: readonly unknown[], group: readonly number[], canonical: Json, n: number): [number, number] | null {
  const places = group.flatMap((c) => {
    const parts = isObj(items[c]) ? (items[c] as Obj).parts : undefined;
    return Array.isArray(parts) ? parts.map((_, p): [number, number] => [c, p]) : [];
  });
  const count = isObj(canonical) && Array.isArray(canonical.parts) ? canonical.parts.length : -1;
  return places.length === count ? (places[n] ?? null) : null;
}

/** The field names of a request on its API; `body` is the parsed request the miss was keyed from. */
export function requestFieldNames(frameJson: string, body: unknown, pathLength: number): FieldNames {
  let frame: Json = null;
  try {
    frame = JSON.parse(frameJson) as Json;
  } catch {
    // Not JSON: Chat Completions' names.
  }
  const api = apiOfFrame(frame);
  const container = CONTAINER[api];
  const list = isObj(body) ? body[container] : undefined;
  const items = Array.isArray(list) ? list : null;
  const groups = items && groupsOf(api, items, body);
  const exact = groups !== null && groups.length === pathLength ? groups : null;
  return {
    frame: (segments) => (isObj(body) && typeof segments[0] === "string" && segments[0] in body ? join("", tail(body, segments)) : join("", segments)),
    message: (index, segments, canonical) => {
      try {
        return messageName(index, segments, canonical);
      } catch {
        return starred(`${container}[*]`, segments);
      }
    },
  };

  function messageName(index: number, segments: readonly Segment[], canonical: Json): string {
    // A Responses `input` string is the one user message.
    if (api === "responses" && typeof list === "string" && pathLength === 1) return "input";
    const group = exact?.[index];
    if (!items || !group) return starred(`${container}[*]`, api === "responses" && segments[0] === "items" ? segments.slice(2) : segments);
    const first = `${container}[${group[0]}]`;
    const item = items[group[0]];
    if (!isObj(item)) return first;
    if (api === "chat") return join(first, chatItem(item, segments, canonical));
    if (api === "messages") return join(first, messagesItem(item, segments));
    if (api === "gemini") {
      if (segments[0] !== "parts" || typeof segments[1] !== "number")
        return group.length === 1 ? join(first, tail(item, segments)) : starred(`${container}[*]`, segments);
      const place = geminiPart(items, group, canonical, segments[1]);
      if (!place) return starred(group.length === 1 ? first : `${container}[*]`, segments);
      const [c, p] = place;
      return join(`${container}[${c}].parts[${p}]`, tail((items[c] as { parts: unknown[] }).parts[p], segments.slice(2), { argsJson: "args" }));
    }
    if (segments[0] !== "items") return join(first, responsesItem(item, segments));
    const m = segments[1];
    if (typeof m !== "number") return first;
    const at = group[m];
    if (at === undefined || !isObj(items[at])) return starred(`${container}[*]`, segments.slice(2));
    return join(`${container}[${at}]`, responsesItem(items[at] as Obj, segments.slice(2)));
  }
}
