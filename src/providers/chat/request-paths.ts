import { firstOf, isObj, join, type Obj, type RequestPaths, type Segment, tail } from "../request-paths";

/** Chat Completions: content as a string or text parts (canonical: a string, or a list of the parts' texts); a refusal part or field. */
function chatItem(item: Obj, segments: readonly Segment[], canonical: unknown): Segment[] {
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

/** Chat Completions' field names: `messages[i]`, one message per request message. */
export const chatRequestPaths: RequestPaths = {
  container: "messages",
  name: (place, segments) => {
    const [first, item] = firstOf(place);
    return join(first, chatItem(item, segments, place.canonical));
  },
};
