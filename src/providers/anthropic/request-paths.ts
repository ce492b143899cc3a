import { firstOf, inList, isObj, join, type Obj, type RequestPaths, type Segment, tail } from "../request-paths";

/** Messages: content blocks (a string is one text block; empty text blocks left out), a tool_result's content likewise. */
function messagesItem(item: Obj, segments: readonly Segment[]): Segment[] {
  if (segments[0] !== "content") return tail(item, segments);
  return inList(item, "content", segments, (block, rest) => (isObj(block) && rest[0] === "content" ? messagesItem(block, rest) : tail(block, rest)));
}

/** Messages' field names: `messages[i]`, one message per request message. */
export const messagesRequestPaths: RequestPaths = {
  container: "messages",
  name: (place, segments) => {
    const [first, item] = firstOf(place);
    return join(first, messagesItem(item, segments));
  },
};
