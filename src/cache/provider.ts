import type { z } from "zod";
import type { Config } from "../config";
import type { ApiError } from "../core/errors";
import type { PathNode, RecordInput } from "../core/recording";
import type { StoredAnswer } from "../core/answer";
import type { TemplateSettings } from "./templates/settings";

/**
 * The seam between the one cached flow (src/engine/cached-completion.ts) and each provider
 * API. The flow never names a provider: it parses, keys, looks up, claims,
 * generates, settles and responds through these functions. A provider is a
 * folder under src/providers/<name>/ with one `ProviderAdapter` over it, listed in src/providers/index.ts
 * (see docs/architecture.md, "How to add a provider"). The tenant is not the
 * adapter's business: src/core/credential.ts reads every credential any
 * upstream or a gateway before it reads (Authorization, Proxy-Authorization, cf-aig-authorization,
 * api-key, x-api-key, x-goog-api-key, ocp-apim-subscription-key, ?key=).
 */

/** Where a request sits in the trees: its tree, the path to h_n, and h_n (`key`), the parent of the answer. */
export interface ProviderKey {
  tenant: string;
  namespace: string;
  treeId: string;
  frameJson: string;
  model: string;
  path: PathNode[];
  key: string;
  /**
   * Present when the client may chain on a template's answer by its id (Responses without `store: false`:
   * src/providers/responses/key.ts): the answer is then kept (a ServedAnswer) before it is served, or not
   * served. Absent: a template's answer is served as is. Exact hits and learning are unchanged.
   */
  chain?: ChainBase;
}

/**
 * Where a request's conversation can be read from before its own messages: `base` is a node or a kept answer
 * on its path (the answer its `previous_response_id` named), `links` kept answers deep; the tree id: the root.
 */
export interface ChainBase {
  base: string;
  links: number;
}

/**
 * Kept template answers one resolution of `previous_response_id` reads through at most: a request whose
 * conversation already leads through this many keeps its own from the root (src/engine/served-answer.ts).
 */
export const MAX_SERVED_LINKS = 8;

/**
 * A learned template's answer as served to a request that may chain on it, kept so that its id resolves
 * (src/store/tree/served-answers.ts): the conversation is the path to `base`, then `tail`, then `answer`.
 */
export interface ServedAnswer {
  treeId: string;
  answerHash: string;
  /** h_n of the request it answered. */
  parent: string;
  base: string;
  /** The request's stored messages after `base` up to `parent`: hash and stored JSON. */
  tail: RecordedMessage[];
  /** The answer's stored message JSON as served. */
  answer: string;
  /** Kept answers between `base` and a recorded node or the root (0: `base` is one). */
  links: number;
}

/** Keying outcome: a key, a reason to bypass the cache, or bad input (a 4xx in the API's envelope). */
export type KeyOutcome<K extends ProviderKey> =
  | { ok: true; key: K }
  | { ok: false; bypass: string }
  | { ok: false; invalid: { message: string; param: string } };

/** A parsed request as the adapter sees it. */
export interface ProviderRequest<B> {
  body: B;
  /** The body's exact text, forwarded unchanged unless `upstreamBody` says otherwise. */
  raw: string;
  url: URL;
  headers: Headers;
}

/** Who and where a request is keyed for. */
export interface KeyScope {
  tenant: string;
  namespace: string;
  /** MAX_CACHEABLE_MESSAGE_BYTES: a larger frame or message is bypassed. */
  maxMessageBytes: number;
}

/** A recorded answer rendered in the API's shape: the JSON body or its event stream. */
export interface Rendered {
  body: string;
  contentType: string;
}

/** What the model produced, ready to record; null when it must not be recorded. */
export type ProviderRecording = RecordInput | null;

/** Reads an upstream answer (a JSON body, or an event stream fed byte by byte) into a recording. */
export interface UpstreamReader {
  fromJson(text: string, latencyMs: number): ProviderRecording;
  stream(): { feed(bytes: Uint8Array): void; finish(latencyMs: number): ProviderRecording };
}

/** Where a miss or a bypass goes: `forward()`'s base, path and query. */
export interface UpstreamTarget {
  base: string;
  pathname: string;
  /** The query sent upstream (`?alt=sse`); default: the client's query string. */
  search?: string;
  /** The var that sets `base`, named in the envelope when the upstream cannot be reached (default UPSTREAM_BASE_URL). */
  baseVar?: string;
}

/** One stored message on a recorded path, as the store keeps it. */
export interface RecordedMessage {
  hash: string;
  /** The stored canonical message JSON. */
  message: string;
}

/** The answer a tenant recorded under an upstream-issued response id, and the upstream's call ids of its calls. */
export interface UpstreamAnswer {
  treeId: string;
  answerHash: string;
  callIds: string[];
}

/**
 * What a provider may read of the store, handed in by the engine: the messages of the path that ends at
 * `answerHash` in tree `treeId`, root first, when that answer is recorded in one of the caller's own
 * trees; null otherwise (another tenant's, pruned, unknown).
 */
export interface RecordedPaths {
  pathTo(treeId: string, answerHash: string): Promise<RecordedMessage[] | null>;
  /**
   * The tree and answer the caller's own recording of an upstream-issued response id names (a recording's
   * `upstreamId`); null when this tenant recorded none. Read its path with `pathTo`, which checks it again.
   */
  answerOfUpstreamId(upstreamId: string): Promise<UpstreamAnswer | null>;
  /** A template's answer the caller was served and kept in tree `treeId` (ServedAnswer); null when none (another tenant's, aged out, unknown). */
  servedAnswer(treeId: string, answerHash: string): Promise<ServedAnswer | null>;
}

/** Where template evidence is read: the tree's shard, bounded by LOOKUP_TIMEOUT_MS, memoised for `ttlMs`. */
export interface TemplateStore {
  db: D1Database;
  timeoutMs: number;
  ttlMs: number;
}

/** What templates do for one keyed request (optional per adapter; the identity when absent). */
export interface TemplatePlan<K extends ProviderKey> {
  /** The key the request is looked up and recorded under (a declared tree, or the concrete key). */
  key: K;
  /** A stored answer with the request's values in it; null when it cannot (or may not yet) be served: then a miss. */
  render(answer: StoredAnswer, store: TemplateStore): StoredAnswer | null | Promise<StoredAnswer | null>;
  /**
   * A learned-template answer for an exact miss, or null. Never throws. `hasTemplates`: what the tree's object
   * just read of the tree's live templates, when it was asked (it refreshes the isolate's memo of that).
   */
  learned(db: D1Database, timeoutMs: number, presenceTtlMs: number, hasTemplates?: boolean): Promise<{ answer: StoredAnswer; template: string } | null>;
  /** Headers of an exact hit (e.g. `muscle-mem-template: declared`). */
  hitHeaders: Record<string, string>;
  /** After render and learned: why a template that could have served this request did not (one line), or null. */
  templateMiss?: () => string | null;
  /**
   * The recording the model's answer is stored as, from what the API's reader keyed (a declared tree's answer
   * abstracted: src/cache/templates/view-declared.ts), or null when it must not be stored (then `afterUnrecorded`
   * runs). Absent: stored as read. Never throws.
   */
  recording?: (recorded: RecordInput) => RecordInput | null;
  /** Runs after a recording, with the tree's shard (template learning, confirming declared bindings). */
  afterRecord?: (recording: RecordInput, db: D1Database) => Promise<void>;
  /** Runs after a generation that was not recorded, with the tree's shard (a declared answer that could not be stored is evidence). Never throws. */
  afterUnrecorded?: (db: D1Database) => Promise<void>;
}

export interface TemplateHook<K extends ProviderKey> {
  /**
   * May throw an ApiError (a malformed bindings header); the flow answers it in the API's envelope.
   * `settings` are the config's template vars, handed in by the flow.
   */
  plan(key: K, headers: Headers, env: Env, settings: TemplateSettings): TemplatePlan<K>;
}

/**
 * One provider API over the cached flow.
 *
 * @example app.post("/v1/responses", cachedCompletion(responsesAdapter))
 */
export interface ProviderAdapter<B, K extends ProviderKey, A> {
  /** A short name for logs and docs (`responses`, `gemini`); never branched on. */
  readonly name: string;
  /** The request body schema; a body that fails it is a 400 in the API's envelope. */
  readonly schema: z.ZodType<B>;
  /** Whether the client asked for the API's event stream. */
  isStream(request: ProviderRequest<B>): boolean;
  /**
   * Completes a request that refers to conversation state the Worker holds (a response id it issued):
   * may read the store; resolves to the request unchanged when there is nothing to complete. The flow
   * bounds it by LOOKUP_TIMEOUT_MS and keeps the request unchanged if it fails.
   */
  resolve?(request: ProviderRequest<B>, store: RecordedPaths): Promise<ProviderRequest<B>>;
  /** Frame, canonical messages and path hashes: the request's key, a bypass reason, or bad input. */
  key(request: ProviderRequest<B>, scope: KeyScope): KeyOutcome<K>;
  /** The upstream for this request (base URL from config, the API's path). */
  upstream(config: Config, request: ProviderRequest<B>): UpstreamTarget;
  /** The body a miss sends upstream (default: the request's raw text). */
  upstreamBody?(request: ProviderRequest<B>): string;
  /** A stored answer validated for rendering; null when the node holds something this API cannot serve. */
  answerOf(stored: StoredAnswer): A | null;
  /** A served answer as the API's JSON or event stream, with fresh ids (`key`: the tree and h_n it was served for). */
  render(answer: A, request: ProviderRequest<B>, stream: boolean, key: K): Rendered;
  /** Reads the upstream's answer to a keyed miss into a recording. */
  reader(key: K, request: ProviderRequest<B>): UpstreamReader;
  /** The Worker's own errors in the API's error envelope. */
  errorResponse(error: ApiError, headers?: Record<string, string>): Response;
  /** Declared variables and learned templates, where the API's shape allows them. */
  templates?: TemplateHook<K>;
}
