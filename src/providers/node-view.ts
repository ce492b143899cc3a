/**
 * How a recorded node reads whatever API recorded it: the provider-neutral view the node API answers beside
 * the message (`view` of `GET /api/nodes/:hash`, which the dashboard shows), and the pieces of one-line
 * previews (src/store/tree/node-preview.ts). Each provider builds its own from its own shapes
 * (src/providers/<api>/view.ts); the helpers here are what every API's messages share.
 */

type Json = Record<string, unknown>;

/** A call a message makes: the tool's name, the call's id (an ordinal, as stored) and its arguments as JSON text. */
export interface NodeCall {
  name: string;
  id: string;
  args: string;
}

/** A tool result a message carries: the id of the call it answers, and its text. */
export interface NodeResult {
  id: string;
  text: string;
}

/** What a node's message says: its texts, the calls it makes, the results it carries and its refusals. */
export interface NodeView {
  texts: string[];
  calls: NodeCall[];
  results: NodeResult[];
  refusals: string[];
}

/**
 * What one part, block, item or call contributes to a one-line preview: its text, the name of a call it
 * makes, or the result it carries.
 */
export interface PreviewPiece {
  text?: string;
  call?: string;
  result?: { id: string; text: string };
}

/**
 * How a provider's stored messages are previewed in lists (children, search, prune roots), which read
 * bounded slices of the message's fields, never the whole message.
 */
export interface PreviewReader {
  /**
   * The stored message's fields a preview reads, by what they hold: `text` (text or a list of parts or
   * blocks), `calls` (a list of calls, items or parts), `callId` (the id of the call a result answers).
   */
  readonly fields: { readonly text?: readonly string[]; readonly calls?: readonly string[]; readonly callId?: readonly string[] };
  /** The roles of the model's own turns, whose slices name calls (`"name"` literals). */
  readonly callerRoles: readonly string[];
  /** What one element of those lists contributes, or undefined when it is none of this API's own shapes. */
  piece(p: Json, textOf: (content: unknown) => string): PreviewPiece | undefined;
}

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A value as JSON text (a string as it is; nothing as `{}`). */
export const jsonText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v ?? {}));

/** An empty view, to fill. */
export const emptyView = (): NodeView => ({ texts: [], calls: [], results: [], refusals: [] });

/** Text of a content that is a string or a list of text parts (other parts as JSON), one line per part. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === null || content === undefined ? "" : jsonText(content);
  return content.map((p) => (typeof p === "string" ? p : isObject(p) && typeof p.text === "string" ? p.text : jsonText(p))).join("\n");
}

/**
 * Adds what no API owns: a string or a `text` as text, a `refusal` part, the parts of a nested `content` (each
 * through `add`, the API's own), else the piece as JSON.
 */
export function addCommonPiece(view: NodeView, p: unknown, add: (p: unknown) => void): void {
  if (typeof p === "string") return void view.texts.push(p);
  if (!isObject(p)) return;
  if (p.type === "refusal" && typeof p.refusal === "string") return void view.refusals.push(p.refusal);
  if (typeof p.text === "string") return void view.texts.push(p.text);
  if (Array.isArray(p.content)) return void p.content.forEach(add);
  view.texts.push(jsonText(p));
}

/** The view with its empty texts left out. */
export function finished(view: NodeView): NodeView {
  return { ...view, texts: view.texts.filter((t) => t !== "") };
}

/** A field of `p` as a string ("" when it is none). */
export const stringOf = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));
