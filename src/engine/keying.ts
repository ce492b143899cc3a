import { recordedPaths } from "./recorded-paths";
import type { Context } from "hono";
import { tenantOfRequest, unlessAnonymous } from "../core/credential";
import { CREDENTIALS } from "../providers";
import type { KeyOutcome, ProviderAdapter, ProviderKey, ProviderRequest } from "../cache/provider";
import type { Config } from "../config";
import { logEvent } from "../observability/log-event";
import { parseJsonText, readJsonText } from "../core/body";
import type { CacheControls } from "./controls";
import { withTimeout } from "./lookup/read-through";
import { recordingHeaders, RequestMemo, requestMemoKey } from "./request-memo";
import type { WorkerEnv } from "./services";

/** A request read, validated and keyed (no credential: a bypass). */
export interface KeyedRequest<B, K extends ProviderKey> {
  request: ProviderRequest<B>;
  keyed: KeyOutcome<K>;
  /** The credential's tenant (null: none), kept even when the request is not keyed, so that its bypass row is its tenant's. */
  tenant: string | null;
}

/**
 * Reads the request's body, then parses, validates, completes (`resolve`) and
 * keys it, each failure a 4xx ApiError. A request of a tenant seen before in
 * this isolate with the same body, URL, namespace and keyed headers takes its
 * parse and key from the request memo (./request-memo.ts); an adapter that
 * completes requests from the store (`resolve`) is never memoised.
 */
export async function keyedRequest<B, K extends ProviderKey, A>(
  c: Context<WorkerEnv>,
  adapter: ProviderAdapter<B, K, A>,
  config: Config,
  controls: CacheControls,
): Promise<KeyedRequest<B, K>> {
  const headers = c.req.raw.headers;
  const raw = await readJsonText(c.req.raw, config.maxBodyBytes);
  const url = new URL(c.req.url);
  const tenant = tenantOfRequest(headers, url, config.cacheAnonymous, CREDENTIALS);
  const memoKey = tenant !== null && !adapter.resolve ? requestMemoKey(tenant, controls.namespace, url, raw) : null;
  const memo = memoKey && RequestMemo.of(config, adapter);
  const known = memo && memoKey && memo.get(memoKey, headers);
  if (known) return { request: { body: known.body, raw, url, headers }, keyed: known.keyed, tenant };

  const { body, lossy } = parseJsonText(raw, adapter.schema);
  let request: ProviderRequest<B> = { body, raw, url, headers };
  if (tenant !== null && !lossy) request = await resolved(adapter, request, c.env, tenant, config);
  const scope = { tenant: tenant ?? "", namespace: controls.namespace, maxMessageBytes: config.maxCacheableMessageBytes };
  const reads = new Map<string, string | null>();
  const all = { read: false };
  const seen = memo ? { ...request, headers: recordingHeaders(headers, reads, all) } : request;
  // Keyed even without a tenant, so that bad input gets its 4xx in the API's envelope whoever sends it.
  const keyed: KeyOutcome<K> = lossy ? { ok: false, bypass: lossy } : adapter.key(seen, scope);
  if (memo && memoKey) memo.set(memoKey, { body, keyed, reads: [...reads] }, all.read);
  return { request, keyed: unlessAnonymous(tenant, keyed), tenant };
}

/** The request completed by the adapter's `resolve` (bounded by LOOKUP_TIMEOUT_MS), or as sent when it fails. */
async function resolved<B, K extends ProviderKey, A>(
  adapter: ProviderAdapter<B, K, A>,
  request: ProviderRequest<B>,
  env: Env,
  tenant: string,
  config: Pick<Config, "lookupTimeoutMs" | "directoryTimeoutMs">,
): Promise<ProviderRequest<B>> {
  if (!adapter.resolve) return request;
  try {
    return await withTimeout(adapter.resolve(request, recordedPaths(env, tenant, config.directoryTimeoutMs)), config.lookupTimeoutMs, "resolve");
  } catch (error) {
    logEvent("error", "resolve_failed", { api: adapter.name, error: String(error) });
    return request;
  }
}
