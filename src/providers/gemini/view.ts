import { addCommonPiece, emptyView, finished, isObject, jsonText, stringOf, type NodeView, type PreviewReader } from "../node-view";

/** A Gemini content (the node API's shape, `{role, parts}`): `text`, `functionCall`, `functionResponse` parts. */
export function geminiView(m: Record<string, unknown>): NodeView {
  const view = emptyView();
  const add = (p: unknown): void => {
    if (isObject(p) && isObject(p.functionCall)) {
      const { name, id, args } = p.functionCall;
      return void view.calls.push({ name: stringOf(name), id: stringOf(id), args: jsonText(args) });
    }
    if (isObject(p) && isObject(p.functionResponse)) {
      const { name, id, response } = p.functionResponse;
      return void view.results.push({ id: stringOf(id ?? name), text: jsonText(response) });
    }
    addCommonPiece(view, p, add);
  };
  for (const part of Array.isArray(m.parts) ? m.parts : []) add(part);
  return finished(view);
}

/** Gemini's stored messages in lists: `parts`, a `functionCall` naming a call, a `functionResponse` carrying a result; the model's role is `model`. */
export const geminiPreview: PreviewReader = {
  fields: { calls: ["parts"] },
  callerRoles: ["model"],
  piece(p) {
    if (isObject(p.functionCall) && typeof p.functionCall.name === "string") return { call: p.functionCall.name };
    if (isObject(p.functionResponse)) {
      const { id, name, response } = p.functionResponse;
      return { result: { id: String(id ?? name), text: typeof response === "string" ? response : JSON.stringify(response) } };
    }
    return undefined;
  },
};
