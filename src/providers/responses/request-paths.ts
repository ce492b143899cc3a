import { inList, isObj, join, nthKept, notEmptyText, type Obj, type RequestPaths, type Segment, starred, tail } from "../request-paths";
import { isAssistantItem } from "./canonical";
import { previousResponseIdOf } from "./resolve";
import type { InputItem, ResponsesRequest } from "./schema";

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

/**
 * Responses' field names: `input[i]`, where a run of assistant items (reasoning, calls, output messages) is one
 * canonical message (`items[m]…` in it); an `input` string is the one user message; a resolved
 * `previous_response_id` leaves the items unknown.
 */
export const responsesRequestPaths: RequestPaths = {
  container: "input",
  groups: (items, body) => {
    if (previousResponseIdOf(body as ResponsesRequest) !== null) return null;
    const groups: number[][] = [];
    items.forEach((item, i) => {
      if (i > 0 && isAssistantItem(items[i - 1] as InputItem) && isAssistantItem(item as InputItem)) groups[groups.length - 1].push(i);
      else groups.push([i]);
    });
    return groups;
  },
  whole: (list, pathLength) => (typeof list === "string" && pathLength === 1 ? "input" : null),
  unplaced: (segments) => (segments[0] === "items" ? segments.slice(2) : segments),
  name: ({ container, items, group }, segments) => {
    const first = `${container}[${group[0]}]`;
    if (segments[0] !== "items") return join(first, responsesItem(items[group[0]] as Obj, segments));
    const m = segments[1];
    if (typeof m !== "number") return first;
    const at = group[m];
    if (at === undefined || !isObj(items[at])) return starred(`${container}[*]`, segments.slice(2));
    return join(`${container}[${at}]`, responsesItem(items[at] as Obj, segments.slice(2)));
  },
};
