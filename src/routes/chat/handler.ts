import type { Context } from "hono";
import { keyRequest, maxCacheableMessageBytes } from "../../cache/key";
import { tenantOfRequest, unlessAnonymous } from "../../auth/credential";
import { configOf } from "../../config";
import { ApiError } from "../../errors";
import { isolate } from "../../isolate";
import { note, phase } from "../../observability";
import type { Claim } from "../../store/single-flight";
import type { TreeWriter } from "../../store/tree-writer";
import { bypassTo } from "../bypass";
import { countHit } from "../counting";
import { claimOf, settleGeneration } from "../claim";
import { notCached, readControls } from "./controls";
import { generate, type Recording } from "../generation";
import { chatAnswerReader } from "./answer-reader";
import { bookmarkHeaders, lookupAnswer, lookupSource } from "./lookup";
import { parseChatRequest } from "./parse";
import { serveAnswer } from "./respond";
import { forgetTemplatePresence, planTemplates, readBindings, settingsOf } from "./templates";

type Ctx = Context<{ Bindings: Env }>;

/**
 * `POST /v1/chat/completions`: exact lookup, then single-flight generation
 * through the tree's Durable Object, failing open to the model whenever the
 * cache cannot answer.
 */
export async function chatCompletions(c: Ctx): Promise<Response> {
  const env = c.env;
  const config = configOf(env);
  const controls = readControls(c.req.raw.headers);
  const bindings = readBindings(c.req.raw.headers);
  const { raw, body, lossy } = await parseChatRequest(c.req.raw, config.maxBodyBytes);
  phase(c, "parse");
  const stream = body.stream === true;
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p.catch(() => undefined));

  const tenant = tenantOfRequest(c.req.raw.headers, new URL(c.req.url), config.cacheAnonymous);
  const keyed = unlessAnonymous(tenant, lossy ? { ok: false, bypass: lossy } : keyRequest(body, tenant ?? "", controls.namespace, maxCacheableMessageBytes(env.MAX_CACHEABLE_MESSAGE_BYTES)));
  note(c, keyed.ok ? { tree: keyed.key.treeId } : { reason: "bypass" in keyed ? keyed.bypass : "invalid" });
  if (!keyed.ok) {
    if ("invalid" in keyed) throw new ApiError("invalid_request", keyed.invalid.message, keyed.invalid.param);
    if (controls.onlyIfCached) throw notCached();
    return bypass(c, raw, config.upstreamBaseUrl);
  }
  const plan = planTemplates(keyed.key, bindings, c.req.raw.headers, settingsOf(env));
  const key = plan.key;
  if (controls.noStore) return bypass(c, raw, config.upstreamBaseUrl, key.treeId);

  const view = { model: body.model, stream, includeUsage: body.stream_options?.include_usage === true };
  const source = lookupSource(env, key.treeId, c.req.raw.headers);
  if (!source) return bypass(c, raw, config.upstreamBaseUrl, key.treeId);
  if (!controls.noCache) {
    const found = await lookupAnswer(source, isolate(config).hot, key.key, config.policy, config.lookupTimeoutMs);
    phase(c, "lookup", { reason: found.status === "failed" ? "lookup_failed" : undefined });
    const served = found.status === "hit" ? await plan.render(found.answer, { db: source.shard.db, timeoutMs: config.lookupTimeoutMs, ttlMs: config.hotCacheTtlMs }) : null;
    if (served) {
      countHit(c, key.treeId, served);
      return serveAnswer(served, { ...view, headers: { ...plan.hitHeaders, ...bookmarkHeaders(source, found) } });
    }
    const learned = found.status === "failed" ? null : await plan.learned(source.shard.db, config.lookupTimeoutMs, config.hotCacheTtlMs);
    if (learned) {
      countHit(c, key.treeId, learned.answer, learned.template);
      return serveAnswer(learned.answer, { ...view, headers: { "muscle-mem-template": learned.template, ...bookmarkHeaders(source, found) } });
    }
    if (controls.onlyIfCached) throw notCached();
    if (found.status === "failed") return bypass(c, raw, config.upstreamBaseUrl, key.treeId);
  } else if (controls.onlyIfCached) {
    throw notCached();
  }

  const writer = env.TREE_WRITER.get(env.TREE_WRITER.idFromName(key.treeId));
  let claim: Claim;
  try {
    claim = controls.noCache ? { role: "alone", reason: "leader-failed" } : await claimOf(writer, key.key, config);
  } catch {
    return bypass(c, raw, config.upstreamBaseUrl, key.treeId);
  }
  phase(c, "claim");
  if (claim.role === "follower") {
    const served = await plan.render(claim.answer, { db: source.shard.db, timeoutMs: config.lookupTimeoutMs, ttlMs: 0 });
    if (served) {
      countHit(c, key.treeId, served);
      return serveAnswer(served, { ...view, headers: { ...plan.hitHeaders, "muscle-mem-single-flight": "follower" } });
    }
    claim = { role: "alone", reason: "leader-failed" };
  }
  const token = claim.role === "leader" ? claim.token : undefined;
  const onSettled = (recording: Recording) =>
    settleGeneration({
      writer,
      treeId: key.treeId,
      key: key.key,
      token,
      hot: isolate(config).hot,
      recording,
      afterRecord: async (recorded) => {
        // A declared answer notes the binding it was given for (a second distinct one lets it serve other values).
        await plan.confirm(source.shard.db, recorded);
        if (!plan.induction) return;
        // Learning runs in its own object per tree, so that joins and records never queue behind it.
        const learned = await learnerOf(env, key.treeId).learn(recorded);
        // Only a new template can turn "this tree has none" into "it has some"; otherwise keep the memo.
        if (learned && learned.induced > 0) forgetTemplatePresence(key.treeId);
      },
    });
  return generate({
    request: c.req.raw,
    raw,
    base: config.upstreamBaseUrl,
    pathname: "/v1/chat/completions",
    timeoutMs: config.upstreamTimeoutMs,
    stream,
    outcome: "miss",
    reader: chatAnswerReader(key, raw.length),
    onSettled,
    waitUntil,
  });
}

/** The object that learns templates for a tree: a TreeWriter of its own, apart from the tree's writer. */
function learnerOf(env: Env, treeId: string): DurableObjectStub<TreeWriter> {
  return env.TREE_WRITER.get(env.TREE_WRITER.idFromName(`learn\u0000${treeId}`));
}

/** Sends the request to the model without the cache: nothing is read or recorded. */
function bypass(c: Ctx, raw: string, base: string, treeId?: string): Promise<Response> {
  return bypassTo(c, { base, pathname: "/v1/chat/completions" }, raw, treeId);
}
