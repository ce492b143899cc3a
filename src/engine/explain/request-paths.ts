import { API_FRAME_KEY } from "../../core/protocol";
import { providerOfApiOrChat } from "../../providers";
import { isObj, join, type RequestPaths, starred, tail } from "../../providers/request-paths";
import type { Json, Segment } from "./compare";

/**
 * A miss's differing field named as the request wrote it (docs/api.md, "Why it missed"): `messages[i]` on Chat
 * Completions and Messages, `input[i]` on Responses, `contents[i]` on Gemini, with the index of the request's own
 * item, not of the canonical message (a Responses run of reasoning items and calls is one message, consecutive
 * Gemini model contents are one). Inside an item the canonical form's path is mapped back: a string `content` is
 * `content`, not `content[0].text`; a list counts the parts the canonical form left out (empty text). A position
 * that cannot be mapped exactly is written `[*]`, never as a guessed index. What each API writes is its
 * provider's `requestPaths` (src/providers/<api>/request-paths.ts), found in the registry by the frame's API. Pure.
 */

/** Names the first differing field of a miss: in canonical message `index` (`message`, its canonical JSON), or in the frame. */
export interface FieldNames {
  message(index: number, segments: readonly Segment[], message: Json): string;
  frame(segments: readonly Segment[]): string;
}

/** The field names of a frame's API: its `muscle-mem:api`'s provider (none, or one no provider has: Chat Completions'). */
function pathsOfFrame(frame: Json): RequestPaths {
  const api = isObj(frame) ? frame[API_FRAME_KEY] : undefined;
  return providerOfApiOrChat(api).requestPaths;
}

/** One group per request item: the canonical form's messages are the request's. */
const oneEach = (items: readonly unknown[]): number[][] => items.map((_, i) => [i]);

/** The field names of a request on its API; `body` is the parsed request the miss was keyed from. */
export function requestFieldNames(frameJson: string, body: unknown, pathLength: number): FieldNames {
  let frame: Json = null;
  try {
    frame = JSON.parse(frameJson) as Json;
  } catch {
    // Not JSON: Chat Completions' names.
  }
  const paths = pathsOfFrame(frame);
  const { container } = paths;
  const list = isObj(body) ? body[container] : undefined;
  const items = Array.isArray(list) ? list : null;
  const groups = items && (paths.groups ? paths.groups(items, body) : oneEach(items));
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
    const whole = paths.whole?.(list, pathLength);
    if (whole) return whole;
    const group = exact?.[index];
    if (!items || !group) return starred(`${container}[*]`, paths.unplaced ? paths.unplaced(segments) : segments);
    if (!isObj(items[group[0]])) return `${container}[${group[0]}]`;
    return paths.name({ container, items, group, canonical }, segments);
  }
}
