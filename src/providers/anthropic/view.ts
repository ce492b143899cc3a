import { addCommonPiece, contentText, emptyView, finished, jsonText, stringOf, type NodeView, type PreviewReader } from "../node-view";

/** An Anthropic message (the node API's shape): `content` as text or blocks (`text`, `tool_use`, `tool_result`). */
export function anthropicView(m: Record<string, unknown>): NodeView {
  const view = emptyView();
  const add = (p: unknown): void => {
    const block = p as Record<string, unknown>;
    if (block?.type === "tool_use") return void view.calls.push({ name: stringOf(block.name), id: stringOf(block.id), args: jsonText(block.input) });
    if (block?.type === "tool_result") return void view.results.push({ id: stringOf(block.tool_use_id), text: contentText(block.content) });
    addCommonPiece(view, p, add);
  };
  if (typeof m.content === "string") view.texts.push(m.content);
  else if (Array.isArray(m.content)) m.content.forEach(add);
  return finished(view);
}

/** Anthropic's stored messages in lists: `content` blocks, `tool_use` naming a call, `tool_result` carrying one. */
export const anthropicPreview: PreviewReader = {
  fields: { text: ["content"] },
  callerRoles: ["assistant"],
  piece(p, textOf) {
    if (p.type === "tool_use" && typeof p.name === "string") return { call: p.name };
    if (p.type === "tool_result") return { result: { id: String(p.tool_use_id), text: textOf(p.content) } };
    return undefined;
  },
};
