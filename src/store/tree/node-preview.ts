import { PROVIDERS } from "../../providers";
import { isObject, type PreviewPiece as Piece } from "../../providers/node-view";

/**
 * One-line previews of stored nodes, for lists (children, search, prune
 * roots): the leading text, the names of the calls a node makes, and the id
 * of the call a result answers, whatever API the tree was recorded through.
 * Lists read bounded slices of the message (previewColumns), never the whole
 * message, so a slice may be cut mid-JSON: then the text literals it holds
 * still show. A list row does not name its tree's API: every provider's
 * PreviewReader (`preview` of its registry entry) says which fields it reads and
 * which pieces are its own, and none of them is named here.
 */

/** The fields of one kind every provider's previews read, each once, in registry order. */
const fieldsOf = (kind: "text" | "calls" | "callId") => [...new Set(PROVIDERS.flatMap((p) => p.preview.fields[kind] ?? []))];

/** Field names become SQL: only plain names (the registry's own, never a request's). */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The columns previewOf reads from a node's stored message, each bounded:
 * `content` (the first text field a provider declares that the message has),
 * `tool_calls` (the first list of calls, items or parts) and `tool_call_id`.
 * `table`: the nodes table's alias with its dot (`n.`), or "".
 */
export function previewColumns(table = ""): string {
  const coalesce = (kind: "text" | "calls" | "callId") => {
    const fields = fieldsOf(kind).filter((f) => PLAIN.test(f));
    if (fields.length === 0) return "NULL";
    // A damaged row whose message is not JSON reads as none (json_extract would fail the whole list).
    const sql = fields.map((f) => `json_extract(CASE WHEN json_valid(${table}message) THEN ${table}message END, '$.${f}')`);
    return sql.length === 1 ? sql[0] : `coalesce(${sql.join(", ")})`;
  };
  return `substr(${coalesce("text")}, 1, 400) AS content,
    substr(${coalesce("calls")}, 1, 2000) AS tool_calls,
    ${coalesce("callId")} AS tool_call_id`;
}

type Json = Record<string, unknown>;

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

/** A part, block, item or call of any API, read for its preview: by the provider whose shape it is, else by what every API shares. */
function pieceOf(p: unknown): Piece {
  if (typeof p === "string") return { text: p };
  if (!isObject(p)) return { text: compactJson(p) };
  for (const provider of PROVIDERS) {
    const own = provider.preview.piece(p as Json, textOf);
    if (own) return own;
  }
  if (typeof p.text === "string") return { text: p.text };
  if (typeof p.refusal === "string") return { text: p.refusal };
  if (Array.isArray(p.content)) return { text: textOf(p.content) };
  return { text: compactJson(p) };
}

/** Roles whose slices name calls (`"name"` fields); other roles' names belong to results (a tool result's tool name). */
const CALLERS = new Set(PROVIDERS.flatMap((p) => p.preview.callerRoles));

/** The `"text"` literal a slice of JSON is cut in the middle of (a block's long text), read up to the cut; null when there is none. */
function cutText(slice: string): string | null {
  const open = /"text":"((?:[^"\\]|\\.)*)\\?$/.exec(slice);
  if (!open) return null;
  try {
    // A cut escape (`\u00`) is dropped with the rest of what the slice did not reach.
    return JSON.parse(`"${open[1].replace(/\\u[0-9a-fA-F]{0,3}$/, "")}"`) as string;
  } catch {
    return null;
  }
}

/**
 * The complete `"text"` literals of a slice of JSON cut before its end (when it holds none, the one it is cut in, so
 * that a single long text block shows its text, not its JSON), and for a caller the `"name"` literals (the names of its calls).
 */
function piecesOfSlice(slice: string, role: string): Piece[] {
  const literals = (field: string) => [...slice.matchAll(new RegExp(`"${field}":("(?:[^"\\\\]|\\\\.)*")`, "g"))].map((m) => JSON.parse(m[1]) as string);
  const texts = literals("text");
  const cut = texts.length === 0 ? cutText(slice) : null;
  return [...(cut ? [cut] : texts).map((text) => ({ text })), ...(CALLERS.has(role) ? literals("name").map((call) => ({ call })) : [])];
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
