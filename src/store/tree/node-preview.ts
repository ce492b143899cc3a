/**
 * One-line previews of stored nodes, for lists (children, search, prune
 * roots): the leading text, the names of the calls a node makes, and the id
 * of the call a result answers, whatever API the tree was recorded through.
 * Lists read bounded slices of the message (previewColumns), never the whole
 * message, so a slice may be cut mid-JSON: then the text literals it holds
 * still show.
 */

/**
 * The columns previewOf reads from a node's stored message, each bounded:
 * `content` (chat text or parts, Anthropic blocks, Responses message parts,
 * a Responses function output), `tool_calls` (chat tool calls, a Responses
 * answer's items, Gemini parts) and `tool_call_id` (chat or Responses).
 * `table`: the nodes table's alias with its dot (`n.`), or "".
 */
export function previewColumns(table = ""): string {
  const field = (path: string) => `json_extract(${table}message, '$.${path}')`;
  return `substr(coalesce(${field("content")}, ${field("output")}), 1, 400) AS content,
    substr(coalesce(${field("tool_calls")}, ${field("items")}, ${field("parts")}), 1, 2000) AS tool_calls,
    coalesce(${field("tool_call_id")}, ${field("call_id")}) AS tool_call_id`;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** What one part, block, item or call of any API contributes: its text, or the name of a call it makes, or the result it carries. */
interface Piece {
  text?: string;
  call?: string;
  result?: { id: string; text: string };
}

const compactJson = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) => pieceOf(p).text ?? "")
      .filter(Boolean)
      .join(" ");
  return compactJson(content ?? "");
}

/** A chat tool call, Anthropic block, Responses item or part, or Gemini part, read for its preview. */
function pieceOf(p: unknown): Piece {
  if (typeof p === "string") return { text: p };
  if (!isObject(p)) return { text: compactJson(p) };
  if (isObject(p.function) && typeof p.function.name === "string") return { call: p.function.name };
  if (isObject(p.functionCall) && typeof p.functionCall.name === "string") return { call: p.functionCall.name };
  if (isObject(p.functionResponse)) {
    const { id, name, response } = p.functionResponse;
    return { result: { id: String(id ?? name), text: compactJson(response) } };
  }
  if ((p.type === "tool_use" || p.type === "function_call") && typeof p.name === "string") return { call: p.name };
  if (p.type === "tool_result") return { result: { id: String(p.tool_use_id), text: textOf(p.content) } };
  if (typeof p.text === "string") return { text: p.text };
  if (typeof p.refusal === "string") return { text: p.refusal };
  if (Array.isArray(p.content)) return { text: textOf(p.content) };
  return { text: compactJson(p) };
}

/** Roles whose slices name calls (`"name"` fields); other roles' names belong to results (Gemini's functionResponse). */
const CALLERS = ["assistant", "model"];

/** The complete `"text"` literals of a slice of JSON cut before its end, and for a caller the `"name"` literals (the names of its calls). */
function piecesOfSlice(slice: string, role: string): Piece[] {
  const literals = (field: string) => [...slice.matchAll(new RegExp(`"${field}":("(?:[^"\\\\]|\\\\.)*")`, "g"))].map((m) => JSON.parse(m[1]) as string);
  return [...literals("text").map((text) => ({ text })), ...(CALLERS.includes(role) ? literals("name").map((call) => ({ call })) : [])];
}

/**
 * The pieces of a column that may hold a JSON list (parts, blocks, items,
 * calls): each element's piece. A column that is plain text, or a list of
 * something else, is `whole`; a list cut mid-JSON (a long message) is what
 * its complete literals say, else `whole`.
 */
function piecesOf(column: string | null, role: string, whole: (column: string) => Piece): Piece[] {
  if (!column) return [];
  if (!column.startsWith("[")) return [whole(column)];
  let list: unknown;
  try {
    list = JSON.parse(column);
  } catch {
    const cut = column.startsWith("[{") ? piecesOfSlice(column, role) : [];
    return cut.length ? cut : [whole(column)];
  }
  return Array.isArray(list) && list.every((p) => typeof p === "string" || isObject(p)) ? list.map(pieceOf) : [whole(column)];
}

/**
 * A one-line preview of a node from previewColumns: `[id]` for a result,
 * its leading text, then `→ name()` for each call it makes.
 */
export function previewOf(role: string, content: string | null, toolCalls: string | null, toolCallId: string | null, max = 160): string {
  const pieces = [...piecesOf(content, role, (text) => ({ text })), ...piecesOf(toolCalls, role, () => ({ call: "…" }))];
  const parts: string[] = [];
  if (toolCallId) parts.push(`[${toolCallId}]`);
  for (const p of pieces) if (p.result) parts.push(`[${p.result.id}] ${p.result.text}`);
  const text = pieces
    .map((p) => p.text ?? "")
    .filter(Boolean)
    .join(" ");
  if (text) parts.push(text.replace(/\s+/g, " ").trim());
  const calls = pieces.flatMap((p) => (p.call ? [p.call === "…" ? p.call : `${p.call}()`] : []));
  if (calls.length) parts.push(`→ ${calls.join(", ")}`);
  const line = parts.filter(Boolean).join(" ") || `(${role}, empty)`;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
