// @ts-check
/**
 * What a node's message says, whatever API the tree was recorded through
 * (GET /api/nodes/:hash answers each in its own shape): its text, the calls it
 * makes (name, id, arguments as JSON text) and the results it carries.
 * Pure, so that it is unit-tested without a browser.
 */

/**
 * @typedef {{ name: string, id: string, args: string }} Call
 * @typedef {{ id: string, text: string }} Result
 * @typedef {{ texts: string[], calls: Call[], results: Result[], refusals: string[] }} MessageView
 * @typedef {Record<string, any>} Json
 */

/** @param {unknown} v */
const json = (v) => (typeof v === "string" ? v : JSON.stringify(v ?? {}));

/** @param {unknown} v @returns {v is Json} */
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Text of a content that is a string or a list of text parts.
 * @param {unknown} content
 */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content == null ? "" : json(content);
  return content.map((p) => (typeof p === "string" ? p : typeof p?.text === "string" ? p.text : json(p))).join("\n");
}

/**
 * Adds one piece of any API to the view: a chat text part, an Anthropic block,
 * a Responses item or content part, a Gemini part.
 * @param {MessageView} view @param {unknown} p
 */
function addPiece(view, p) {
  if (typeof p === "string") return void view.texts.push(p);
  if (!isObject(p)) return;
  if (isObject(p.functionCall)) return void view.calls.push({ name: p.functionCall.name, id: p.functionCall.id ?? "", args: json(p.functionCall.args) });
  if (isObject(p.functionResponse))
    return void view.results.push({ id: p.functionResponse.id ?? p.functionResponse.name, text: json(p.functionResponse.response) });
  if (p.type === "tool_use") return void view.calls.push({ name: p.name, id: p.id, args: json(p.input) });
  if (p.type === "tool_result") return void view.results.push({ id: p.tool_use_id, text: textOf(p.content) });
  if (p.type === "function_call") return void view.calls.push({ name: p.name, id: p.call_id, args: json(p.arguments) });
  if (p.type === "function_call_output") return void view.results.push({ id: p.call_id, text: textOf(p.output) });
  if (p.type === "refusal") return void view.refusals.push(p.refusal);
  if (typeof p.text === "string") return void view.texts.push(p.text);
  if (Array.isArray(p.content)) return void p.content.forEach((/** @type {unknown} */ q) => addPiece(view, q));
  view.texts.push(json(p));
}

/**
 * The view of a message: OpenAI chat (`content`, `tool_calls`, `tool_call_id`),
 * Anthropic (`content` blocks), Responses (`items`) or Gemini (`parts`).
 * @param {Json} m
 * @returns {MessageView}
 */
export function messageView(m) {
  /** @type {MessageView} */
  const view = { texts: [], calls: [], results: [], refusals: [] };
  if (typeof m.tool_call_id === "string") view.results.push({ id: m.tool_call_id, text: textOf(m.content) });
  else if (typeof m.content === "string") view.texts.push(m.content);
  else if (Array.isArray(m.content)) m.content.forEach((p) => addPiece(view, p));
  for (const p of [...(Array.isArray(m.items) ? m.items : []), ...(Array.isArray(m.parts) ? m.parts : [])]) addPiece(view, p);
  for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : [])
    view.calls.push({ name: call.function?.name, id: call.id, args: json(call.function?.arguments) });
  if (typeof m.refusal === "string" && m.refusal) view.refusals.push(m.refusal);
  view.texts = view.texts.filter((t) => t !== "");
  return view;
}
