import type { StoredAnswer } from "../core/answer";
import type { ProviderAdapter, ProviderKey, TemplatePlan } from "../cache/provider";
import type { Config } from "../config";
import { ApiError } from "../core/errors";
import { missed, note, phase } from "../observability/report";
import { askedMiss, explainAfterResponse, missBefore, missHeader, type MissBefore } from "./explain/miss";
import { BINDINGS_HEADER, CACHE_HEADER, NODE_HEADER, SINGLE_FLIGHT_HEADER, TEMPLATE_HEADER, TEMPLATE_MISS_HEADER } from "../core/protocol";
import type { Claim } from "../store/objects/single-flight";
import { treeWriterOf } from "../store/objects/tree-objects";
import type { TreeWriter } from "../store/objects/tree-writer";
import { bypassTo } from "./bypass";
import { notCached, readControls } from "./controls";
import { keyedRequest } from "./keying";
import { bookmarkHeaders, lookupAnswer, lookupSource } from "./lookup/read-through";
import { claimFrom, claimOf } from "./claim";
import { countHit } from "./counting/count-hit";
import { childlessMemory } from "./lookup/childless";
import { fastMiss } from "./fast-miss";
import { generation, type Ctx, type Walk } from "./miss-generation";
import { serveRendered } from "./serve";
import { keyAccepted, type CheckTarget } from "./key-freshness";
import { tenantOf } from "../core/hash";

/** The tenant of requests without a credential (CACHE_ANONYMOUS): no key to check with a provider. */
const ANONYMOUS = tenantOf(null);

/**
 * The one cached-completion flow, for any provider API: parse → key → lookup
 * (exact, then templates) → claim (single flight in the tree's object) →
 * generate → settle → respond. Controls (`cache-control`, namespace),
 * fail-open bypass, `server-timing` phases and hit counting hold for every
 * adapter. The Worker's own errors are answered in the adapter's envelope.
 *
 * @example app.post("/v1/responses", cachedCompletion(responsesAdapter))
 */
export function cachedCompletion<B, K extends ProviderKey, A>(adapter: ProviderAdapter<B, K, A>): (c: Ctx) => Promise<Response> {
  return async (c) => {
    try {
      return await run(c, adapter);
    } catch (error) {
      // An `only-if-cached` 504 after a lookup is a miss (explained like any other).
      if (error instanceof ApiError)
        return adapter.errorResponse(error, error.code === "not_cached" && c.get("mm")?.miss ? { [CACHE_HEADER]: "miss" } : undefined);
      throw error;
    }
  };
}

async function run<B, K extends ProviderKey, A>(c: Ctx, adapter: ProviderAdapter<B, K, A>): Promise<Response> {
  const { config } = c.var.services;
  const headers = c.req.raw.headers;
  const controls = readControls(headers);
  const { request, keyed, tenant } = await keyedRequest(c, adapter, config, controls);
  phase(c, "parse");
  const walk: Walk<B, K, A> = { c, adapter, config, controls, request, stream: adapter.isStream(request) };
  if (!keyed.ok) {
    if ("invalid" in keyed) throw new ApiError("invalid_request", keyed.invalid.message, keyed.invalid.param);
    return uncached(walk, keyed.bypass, tenant);
  }
  note(c, { tree: keyed.key.treeId, tenant: keyed.key.tenant });
  const plan = adapter.templates?.plan(keyed.key, headers, c.env, config.templates) ?? identityPlan(keyed.key, headers);
  const treeId = plan.key.treeId;
  if (controls.noStore) return bypass(walk, treeId, "no-store");
  const source = await lookupSource(c.env, config, treeId, headers, (work) => c.executionCtx.waitUntil(work));
  if (!source) return bypass(walk, treeId, "store unavailable");
  if (controls.noCache) {
    missed(c, { header: "no-cache", explain: async () => askedMiss(plan.key) });
    if (controls.onlyIfCached) throw notCached();
    return generation(walk, plan, source.shard.db, treeWriterOf(c.env, treeId), async () => undefined);
  }
  // The tree's object stub, made only when a step needs it (a warm hit never does).
  let stub: DurableObjectStub<TreeWriter> | undefined;
  const writerOf = () => (stub ??= treeWriterOf(c.env, treeId, source.shard.name));
  // A path through a leaf this isolate knows to be childless cannot hit: forward at once (./lookup/childless.ts).
  const childless = childlessMemory(config.hotCacheTtlMs);
  if (!controls.onlyIfCached && !c.var.services.isolate.hot.get(plan.key.key)) {
    const depth = childless.knownLeaf(
      plan.key.path.map((p) => p.hash),
      treeId,
      adapter.templates !== undefined,
    );
    // A fast miss looks no template up: its header says only why declared variables were not used, when they were not.
    if (depth !== null && childless.begin(plan.key.key, config.singleFlightWaitMs))
      return withTemplateMiss(await fastMiss(walk, plan, source.shard.db, writerOf(), depth), plan.templateMiss?.() ?? null);
  }
  // Cold, the Worker reads D1 itself; only a read with nothing to serve calls the tree's object, which joins single flight on a miss (reading the primary again unless the Worker's read was the tree's primary and nothing touched the key since: docs/reliability.md).
  const far = {
    get writer() {
      return writerOf();
    },
    treeId,
    templates: adapter.templates !== undefined,
    join: !controls.onlyIfCached,
    defer: (work: Promise<unknown>) => c.executionCtx.waitUntil(work),
    // Read on a cold lookup only: a miss then says how deep its path is recorded, in the lookup's own query.
    get path() {
      return plan.key.path.map((p) => p.hash);
    },
  };
  const lookupAt = Date.now();
  const found = await lookupAnswer(source, c.var.services.isolate.hot, plan.key.key, config.policy, config.lookupTimeoutMs, far);
  phase(c, "lookup", { reason: found.status === "failed" ? "lookup_failed" : undefined });
  // What the tree's object said of its learned templates: a fast miss on a template route needs "none" (./lookup/childless.ts).
  if (found.status === "miss" && found.templates === false) childless.noteNoTemplates(treeId, lookupAt);
  else if (found.status === "miss" && found.templates === true) childless.forgetTemplates(treeId);
  const store = { db: source.shard.db, timeoutMs: config.lookupTimeoutMs, ttlMs: config.hotCacheTtlMs };
  // Only a credential its provider accepted within KEY_FRESH_MS is served (./key-freshness.ts), asked only when there is something to serve.
  const accepted = servable(c, config, keyed.key.tenant, () => ({ ...adapter.upstream(config, request), headers, url: c.req.url }));
  if (found.status === "hit" && (await accepted())) {
    const hit = serve(walk, plan, await plan.render(found.answer, store), { ...plan.hitHeaders, ...bookmarkHeaders(source, found) });
    if (hit) return hit;
  }
  // The tree's object, asked cold, says whether the tree has live templates: none, nothing learned to serve.
  if (found.status !== "failed" && !(found.status === "miss" && found.templates === false)) {
    const read = found.status === "miss" ? found.templates : undefined;
    const learned = await plan.learned(source.shard.db, config.lookupTimeoutMs, config.hotCacheTtlMs, read);
    const hit =
      learned &&
      (await accepted()) &&
      serve(walk, plan, learned.answer, { [TEMPLATE_HEADER]: learned.template, ...bookmarkHeaders(source, found) }, learned.template);
    if (hit) return hit;
  }
  if (found.status !== "failed") {
    // What the lookup read says before the response; the rest is worked out after it (src/engine/explain/miss.ts).
    const pathLength = plan.key.path.length;
    const before: MissBefore = found.status === "miss" ? missBefore(pathLength, found.recorded, found.probe) : { kind: "unconfirmed", depth: pathLength };
    const startedAt = c.get("mm")?.startedAt ?? Date.now();
    missed(c, {
      header: missHeader(before),
      explain: (template) =>
        explainAfterResponse({ db: source.shard.db, key: plan.key, startedAt, timeoutMs: config.lookupTimeoutMs, template, before, request: request.body }),
    });
  }
  if (controls.onlyIfCached) {
    if (found.status === "failed") throw notCached();
    // A 504 after a lookup is a miss, with why a template did not serve (as on the model's answer).
    return withTemplateMiss(adapter.errorResponse(notCached(), { [CACHE_HEADER]: "miss" }), plan.templateMiss?.() ?? null);
  }
  if (found.status === "failed") return bypass(walk, treeId);

  let claim: Claim;
  try {
    claim =
      found.status === "miss" && found.joined
        ? await claimFrom(writerOf(), plan.key.key, found.joined, config)
        : await claimOf(writerOf(), plan.key.key, config);
  } catch {
    return bypass(walk, treeId, "claim failed");
  }
  phase(c, "claim");
  if (claim.role === "follower") {
    const hit =
      (await accepted()) &&
      serve(walk, plan, await plan.render(claim.answer, { ...store, ttlMs: 0 }), { ...plan.hitHeaders, [SINGLE_FLIGHT_HEADER]: "follower" });
    if (hit) return hit;
    // The leader's answer cannot be served to this request: generate again.
    claim = { role: "alone", reason: "leader-failed" };
  }
  const token = claim.role === "leader" ? claim.token : undefined;
  return withTemplateMiss(await generation(walk, plan, source.shard.db, writerOf(), async () => token), plan.templateMiss?.() ?? null);
}

/** The miss response with `muscle-mem-template-miss: <reason>` when a template could have served and did not. */
function withTemplateMiss(response: Response, reason: string | null): Response {
  if (reason === null) return response;
  const headers = new Headers(response.headers);
  headers.set(TEMPLATE_MISS_HEADER, reason);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * Whether this request's credential may be served from the cache, asked once and only when an answer is at
 * hand (a miss never waits on it); a refusal is noted (`key_unverified`) and the request goes on to the model.
 */
function servable(c: Ctx, config: Config, tenant: string, route: () => CheckTarget): () => Promise<boolean> {
  let asked: Promise<boolean> | undefined;
  return () =>
    (asked ??= keyAccepted(c.env.DB, config.access, tenant === ANONYMOUS ? null : tenant, { route }).then((ok) => {
      if (!ok) note(c, { reason: "key_unverified" });
      return ok;
    }));
}

/** Serves a stored answer when the adapter can render it (counted as a hit); null otherwise. */
function serve<B, K extends ProviderKey, A>(
  walk: Walk<B, K, A>,
  plan: TemplatePlan<K>,
  stored: StoredAnswer | null,
  headers: Record<string, string>,
  template?: string,
): Response | null {
  const answer = stored && walk.adapter.answerOf(stored);
  if (!stored || !answer) return null;
  countHit(walk.c, plan.key.treeId, stored, template);
  return serveRendered(walk.adapter.render(answer, walk.request, walk.stream, plan.key), walk.stream, { [NODE_HEADER]: stored.hash, ...headers });
}

/** A request the cache does not key: `only-if-cached` is a 504, anything else goes to the model. Its row is its tenant's (GET /api/requests/:id says why). */
function uncached<B, K extends ProviderKey, A>(walk: Walk<B, K, A>, reason: string, tenant: string | null): Promise<Response> {
  note(walk.c, { reason, tenant: tenant ?? undefined });
  if (walk.controls.onlyIfCached) throw notCached();
  return bypass(walk);
}

/** Sends the request to the model without the cache: nothing is read or recorded (`reason`: why, for the request log). */
function bypass<B, K extends ProviderKey, A>(walk: Walk<B, K, A>, treeId?: string, reason?: string): Promise<Response> {
  if (reason) note(walk.c, { reason });
  const target = walk.adapter.upstream(walk.config, walk.request);
  return bypassTo(walk.c, target, walk.adapter.upstreamBody?.(walk.request) ?? walk.request.raw, treeId, (error, headers) =>
    walk.adapter.errorResponse(error, headers),
  );
}

/**
 * Why declared variables did not serve on an API with no templates at all (an adapter with neither chat's keying
 * nor a template view: none of the registered ones, docs/architecture.md "How to add a provider"): the header is
 * read nowhere there, so a client that sends it is told on every miss.
 */
const BINDINGS_UNSUPPORTED = `${BINDINGS_HEADER} is not used on this API (no templates serve it): keyed with the values as sent`;

/** No templates: the concrete key, answers served as stored; a miss that sent declared variables says they were not used. */
function identityPlan<K extends ProviderKey>(key: K, headers: Headers): TemplatePlan<K> {
  const templateMiss = headers.has(BINDINGS_HEADER) ? () => BINDINGS_UNSUPPORTED : undefined;
  return { key, render: (answer) => answer, learned: async () => null, hitHeaders: {}, templateMiss };
}
