import { addCommonPiece, contentText, emptyView, finished, jsonText, stringOf, type NodeView, type PreviewReader } from "../node-view";

/** A Responses node (the node API's shape, `{role, items}`): message items' parts, `function_call`, `function_call_output`. */
export function responsesView(m: Record<string, unknown>): NodeView {
  const view = emptyView();
  const add = (p: unknown): void => {
    const item = p as Record<string, unknown>;
    if (item?.type === "function_call") return void view.calls.push({ name: stringOf(item.name), id: stringOf(item.call_id), args: jsonText(item.arguments) });
    if (item?.type === "function_call_output") return void view.results.push({ id: stringOf(item.call_id), text: contentText(item.output) });
    addCommonPiece(view, p, add);
  };
  for (const item of Array.isArray(m.items) ? m.items : []) add(item);
  return finished(view);
}

/** Responses' stored messages in lists: message parts (`content`), a result's `output`, an answer's `items`, `call_id`. */
export const responsesPreview: PreviewReader = {
  fields: { text: ["content", "output"], calls: ["items"], callId: ["call_id"] },
  callerRoles: ["assistant"],
  piece: (p) => (p.type === "function_call" && typeof p.name === "string" ? { call: p.name } : undefined),
};
