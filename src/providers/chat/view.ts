import { addCommonPiece, emptyView, finished, isObject, jsonText, contentText, stringOf, type NodeView, type PreviewReader } from "../node-view";

/** A chat message (the node API's shape): `content` (text or parts), `tool_calls`, `tool_call_id`, `refusal`. */
export function chatView(m: Record<string, unknown>): NodeView {
  const view = emptyView();
  const add = (p: unknown) => addCommonPiece(view, p, add);
  if (typeof m.tool_call_id === "string") view.results.push({ id: m.tool_call_id, text: contentText(m.content) });
  else if (typeof m.content === "string") view.texts.push(m.content);
  else if (Array.isArray(m.content)) m.content.forEach(add);
  for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    const fn = isObject(call) && isObject(call.function) ? call.function : {};
    view.calls.push({ name: stringOf(fn.name), id: isObject(call) ? stringOf(call.id) : "", args: jsonText(fn.arguments) });
  }
  if (typeof m.refusal === "string" && m.refusal) view.refusals.push(m.refusal);
  return finished(view);
}

/** Chat's stored messages in lists: `content`, `tool_calls` (calls named by `function.name`), `tool_call_id`. */
export const chatPreview: PreviewReader = {
  fields: { text: ["content"], calls: ["tool_calls"], callId: ["tool_call_id"] },
  callerRoles: ["assistant"],
  piece: (p) => (isObject(p.function) && typeof p.function.name === "string" ? { call: p.function.name } : undefined),
};
