import type { AccessSettings, Config } from "../config";
import { withTimeout } from "../core/deadline";
import { logEvent } from "../observability/log-event";
import { DEFAULT_UPSTREAM, UPSTREAMS } from "../providers/index";
import { upstreamBase, type UpstreamVar } from "../providers/upstream";
import { forward, GEMINI_BASE_VAR, receivesEveryCredential } from "../upstream/forward";

/**
 * Keys the provider still accepts (issue 29, outcome 5). A hit never reaches the provider, so a revoked key
 * would be served forever. Instead a credential is served hits (and reads its tenant's trees through /api)
 * only while its provider accepted it within KEY_FRESH_MS: its last successful upstream call through the
 * Worker, kept per tenant and provider in this isolate and per tenant in D1 (`credential_checks`, by the
 * credential's hash, with the provider that accepted it). A hit counts only its own provider's acceptance. When that
 * is older, a cheap upstream call (`GET …/models` with the request's own credential headers, which no
 * provider bills) re-checks it at the provider the credential belongs to (an `/api` caller's bare key: the
 * provider that last accepted it, kept beside its time, else its shape: `keyCheckTarget`); anything but a 2xx (a revoked key's 401, an upstream without the route, a
 * timeout) sends the request to the model, whose own answer then decides.
 *
 * A key revoked at time R is served at most until R + KEY_FRESH_MS (+ KEY_CHECK_TIMEOUT_MS).
 */

/** The clock every freshness decision reads; tests replace `now` (never wall-clock waits). */
export const keyClock = { now: (): number => Date.now() };

/** The provider a credential belongs to, by its upstream's key check id (`openai`, `anthropic`): whose model list re-checks it. */
export type KeyProvider = string;

/** The upstream whose key check is `id`, if a provider declares it. */
function upstreamOfId(id: string | null | undefined): UpstreamVar | undefined {
  return UPSTREAMS.find((u) => u.keyCheck.id === id);
}

/** The provider of an upstream, by the var that names its base (an unknown var: the default upstream's). */
export function providerOfBase(baseVar: string | undefined): KeyProvider {
  return (UPSTREAMS.find((u) => u.name === baseVar) ?? DEFAULT_UPSTREAM).keyCheck.id;
}

/** What this isolate knows per tenant: when the provider last accepted its key (and which), and when D1 was last told. */
interface Known {
  acceptedAt: number;
  writtenAt: number;
  provider?: KeyProvider;
}

/** Tenants this isolate knows (bounded; the oldest go first). */
const MAX_KNOWN = 20_000;
const known = new Map<string, Known>();

/**
 * When each provider last accepted a tenant's credential, by `provider \0 tenant` (bounded as `known`): a hit is
 * served on the word of the provider it stands for, never of another (whose upstream may never have received
 * the key, or not read it: a gateway with stored keys, a model on the operator's own network).
 */
const knownAt = new Map<string, number>();

function remember(tenant: string, entry: Known): void {
  known.delete(tenant);
  known.set(tenant, entry);
  if (known.size > MAX_KNOWN) known.delete(known.keys().next().value as string);
}

function rememberAt(tenant: string, provider: KeyProvider, at: number): void {
  const id = `${provider}\u0000${tenant}`;
  knownAt.delete(id);
  knownAt.set(id, at);
  if (knownAt.size > MAX_KNOWN) knownAt.delete(knownAt.keys().next().value as string);
}

/** Forgets what this isolate knows (tests). */
export function forgetAccepted(): void {
  known.clear();
  knownAt.clear();
}

function fresh(acceptedAt: number | undefined, access: AccessSettings, now: number): boolean {
  return acceptedAt !== undefined && now - acceptedAt < access.keyFreshMs;
}

/** Where a stale credential is re-checked: the upstream the request goes to, and the request's own headers. */
export interface CheckTarget {
  base: string;
  /** The route's path (`/v1/chat/completions`, `/v1beta/models/m:generateContent`): the check asks its API's model list. */
  pathname: string;
  headers: Headers;
  /** The request's URL, whose query (`?key=`, `?api-version=`) goes with the check. */
  url: string;
  baseVar?: string;
}

/** The provider that last accepted a tenant's credential, when known (this isolate, else D1): a stale key's check asks it. */
type StoredProvider = KeyProvider | undefined;

/**
 * The model-list path of the API `pathname` belongs to: Gemini's `/v1beta/models`, its OpenAI-compatible
 * layer's `/v1beta/openai/models` (which reads the key as a bearer token, as its chat route does), else `/v1/models`.
 */
export function checkPath(pathname: string): string {
  if (pathname.startsWith("/v1beta/openai/")) return "/v1beta/openai/models";
  const version = /^\/(v1beta|v1alpha|v1)\//.exec(pathname)?.[1] ?? "v1";
  return `/${version}/models`;
}

/**
 * What a stale credential is re-checked with: a hit's `route` (its own upstream and the request's headers: only
 * that provider's acceptance counts), or an `/api` caller's `bareKey` (at the provider that last accepted it,
 * whose acceptance is the one that counts).
 */
export type KeyCheckOf = { route: () => CheckTarget } | { bareKey: (provider: StoredProvider) => CheckTarget };

/**
 * True when the provider accepted the tenant's credential within KEY_FRESH_MS, asking it again (one cheap
 * call) when it is older; false sends the request to the model. Never throws. Without a credential (the
 * anonymous tenant) or with KEY_FRESH_MS = 0 there is nothing to check. A hit counts only its own route's
 * provider's acceptance: a 2xx from another upstream, which may never have read the key (x-goog-api-key is
 * kept from OpenAI's) or reads none (a gateway with stored keys, a model on the operator's network), proves
 * nothing about it.
 */
export async function keyAccepted(db: D1Database, access: AccessSettings, tenant: string | null, check: KeyCheckOf | null): Promise<boolean> {
  if (access.keyFreshMs === 0 || tenant === null) return true;
  const now = keyClock.now();
  const route = check && "route" in check ? check.route() : undefined;
  const only = route && providerOfBase(route.baseVar);
  const mine = known.get(tenant);
  if (fresh(only === undefined ? mine?.acceptedAt : knownAt.get(`${only}\u0000${tenant}`), access, now)) return true;
  const stored = await readAccepted(db, tenant, access.keyCheckTimeoutMs);
  const provider = stored?.provider ?? mine?.provider;
  if (stored && fresh(stored.at, access, now) && (only === undefined || stored.provider === only)) {
    if (!fresh(mine?.acceptedAt, access, now)) remember(tenant, { acceptedAt: stored.at, writtenAt: stored.at, provider });
    if (stored.provider !== undefined) rememberAt(tenant, stored.provider, stored.at);
    return true;
  }
  if (!check) return false;
  const asked = route ?? ("bareKey" in check ? check.bareKey(provider) : undefined);
  if (!asked) return false;
  const ok = await checkUpstream(asked, access.keyCheckTimeoutMs);
  if (ok) await noteAccepted(db, access, tenant, providerOfBase(asked.baseVar), receivesEveryCredential(asked.headers, asked.baseVar, asked.url));
  return ok;
}

/**
 * Whose credential a bare key (an `/api` caller's `Authorization: Bearer <key>`) is: the provider that last
 * accepted it through the Worker when known, else the upstream whose keys have its prefix (`sk-ant-…`,
 * `AIza…`), else the default upstream (UPSTREAM_BASE_URL).
 */
export function keyUpstream(key: string, stored: StoredProvider): UpstreamVar {
  return upstreamOfId(stored) ?? UPSTREAMS.find((u) => u.keyCheck.keyPrefix !== undefined && key.startsWith(u.keyCheck.keyPrefix)) ?? DEFAULT_UPSTREAM;
}

/**
 * The check of a bare key at its own provider, sent the way that provider takes it (each upstream's
 * `keyCheck`: OpenAI's `GET /v1/models` with `Authorization: Bearer`, Anthropic's with `x-api-key` and
 * `anthropic-version`, Gemini's `GET /v1beta/models` with `x-goog-api-key`). A key is never sent to another
 * provider than its own.
 */
export function keyCheckTarget(config: Config, key: string, stored: StoredProvider): CheckTarget {
  const upstream = keyUpstream(key, stored);
  const base = upstreamBase(config, upstream);
  // Azure reads an API key from `api-key` only (a bearer token there is an Entra token, a JWT: `eyJ…`).
  const azureKey = azureResource(base.base) !== null && upstream.keyCheck.id === "openai" && !key.startsWith("eyJ");
  const headers = azureKey ? new Headers({ "api-key": key }) : upstream.keyCheck.headers(key);
  return { ...base, pathname: upstream.keyCheck.pathname, headers, url: "http://api.invalid/" };
}

/** The api-version of Azure OpenAI's model list that a key check asks: the GA version whose spec lists `GET /openai/models`. */
export const AZURE_CHECK_API_VERSION = "2024-10-21";

/** An Azure OpenAI deployment base: the resource's `…/openai` (and any prefix before it), then `/deployments/<name>`. */
const AZURE_DEPLOYMENT = /^([^?#]*\/openai)\/deployments\/[^/?#]+\/*$/;

/**
 * The `…/openai` root of an Azure OpenAI deployment base (`https://r.openai.azure.com/openai/deployments/x`
 * gives `https://r.openai.azure.com/openai`), or null for any other base. Azure has no model list under a
 * deployment (`…/deployments/x/models` is a 404): its key check asks the resource's, `{root}/models`.
 *
 * @example azureResource("https://r.openai.azure.com/openai/deployments/gpt-4o") // "https://r.openai.azure.com/openai"
 */
export function azureResource(base: string): string | null {
  return AZURE_DEPLOYMENT.exec(base)?.[1] ?? null;
}

/**
 * The request a stale key's check sends: `GET {base}/models` (Gemini's `/v1beta/models`) with the request's
 * query but Gemini's `alt`; at an Azure deployment base, the resource's model list
 * (`{resource}/openai/models`) with `api-version` AZURE_CHECK_API_VERSION, which Azure answers for any
 * key it accepts (before 11-28 the check asked `…/deployments/x/models`, which Azure answers 404: every
 * Azure key went to the model once stale, and read no `/api`).
 */
export function checkRequest(target: CheckTarget): { base: string; pathname: string; search: string } {
  const root = target.baseVar === GEMINI_BASE_VAR ? null : azureResource(target.base);
  if (root === null) return { base: target.base, pathname: checkPath(target.pathname), search: checkSearch(target.url) };
  return { base: root, pathname: "/v1/models", search: checkSearch(target.url, { "api-version": AZURE_CHECK_API_VERSION }) };
}

/**
 * Records that the provider just accepted the tenant's credential (a 2xx from its upstream). D1 is told at
 * most once per quarter of KEY_FRESH_MS per tenant and isolate; a failing write is logged, never thrown. When
 * the upstream did not receive the whole credential (`whole` false: a header the Worker keeps from it, such as
 * x-goog-api-key from OpenAI's), its 2xx serves only its own route's hits in this isolate: the tenant (and
 * its `/api` reads) is not renewed.
 */
export async function noteAccepted(db: D1Database, access: AccessSettings, tenant: string | null, provider?: KeyProvider, whole = true): Promise<void> {
  if (access.keyFreshMs === 0 || tenant === null) return;
  const now = keyClock.now();
  if (!whole) {
    if (provider !== undefined) rememberAt(tenant, provider, now);
    return;
  }
  const prior = known.get(tenant);
  const due = !prior || now - prior.writtenAt >= access.keyFreshMs / 4 || (provider !== undefined && prior.provider !== provider);
  remember(tenant, { acceptedAt: now, writtenAt: due ? now : (prior?.writtenAt ?? now), provider: provider ?? prior?.provider });
  if (provider !== undefined) rememberAt(tenant, provider, now);
  if (!due) return;
  try {
    await db
      .prepare(
        "INSERT INTO credential_checks (tenant, accepted_at, provider) VALUES (?1, ?2, ?3) ON CONFLICT (tenant) DO UPDATE SET accepted_at = max(accepted_at, excluded.accepted_at), provider = coalesce(excluded.provider, provider)",
      )
      .bind(tenant, now, provider ?? null)
      .run();
  } catch (error) {
    logEvent("warn", "credential_check_write_failed", { error: String(error) });
  }
}

async function readAccepted(db: D1Database, tenant: string, timeoutMs: number): Promise<{ at: number; provider: StoredProvider } | undefined> {
  try {
    const row = await withTimeout(
      db.prepare("SELECT accepted_at AS at, provider FROM credential_checks WHERE tenant = ?1").bind(tenant).first<{ at: number; provider: string | null }>(),
      timeoutMs,
      "credential check read",
    );
    if (!row) return undefined;
    const provider = upstreamOfId(row.provider)?.keyCheck.id;
    return { at: row.at, provider };
  } catch (error) {
    logEvent("warn", "credential_check_read_failed", { error: String(error) });
    return undefined;
  }
}

/** One `GET …/models` (`checkRequest`) with the request's credential headers: true on a 2xx. */
async function checkUpstream(target: CheckTarget, timeoutMs: number): Promise<boolean> {
  const { base, pathname, search } = checkRequest(target);
  try {
    const res = await forward({
      base,
      pathname,
      search,
      method: "GET",
      headers: withoutBody(target.headers),
      body: null,
      timeoutMs,
      baseVar: target.baseVar,
    });
    await res.body?.cancel();
    if (!res.ok) logEvent("info", "credential_not_accepted", { status: res.status });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * The request's query (`?key=`, `?api-version=`) without Gemini's `alt=sse`, which a model list does not take,
 * with `set`'s parameters put in place of the request's own.
 */
function checkSearch(url: string, set: Readonly<Record<string, string>> = {}): string {
  const params = new URL(url).searchParams;
  params.delete("alt");
  for (const [name, value] of Object.entries(set)) params.set(name, value);
  const search = params.toString();
  return search === "" ? "" : `?${search}`;
}

/** The request's headers without those that describe its body (the check sends none). */
function withoutBody(headers: Headers): Headers {
  const copy = new Headers(headers);
  for (const name of ["content-type", "content-encoding", "content-length"]) copy.delete(name);
  return copy;
}
