import type { Context } from "hono";
import { tenantOfRequest, unlessAnonymous } from "../../auth/credential";
import { keyMessagesRequest, type AnthropicKey } from "../../cache/anthropic/key";
import { maxCacheableMessageBytes } from "../../cache/key";
import { anthropicAnswerOf, type AnthropicAnswer } from "../../cache/anthropic/render";
import { messagesRequest } from "../../cache/anthropic/schema";
import type { StoredAnswer } from "../../cache/answer";
import { configOf } from "../../config";
import { ApiError } from "../../errors";
import { isolate } from "../../isolate";
import { note } from "../../observability";
import type { Claim } from "../../store/single-flight";
import { parseJsonBody } from "../body";
import { claimOf, settleGeneration } from "../claim";
import { notCached, readControls } from "../chat/controls";
import { bookmarkHeaders, lookupAnswer, lookupSource } from "../chat/lookup";
import { generate, type Recording } from "../generation";
import { messagesAnswerReader } from "./answer-reader";
import { serveMessage } from "./respond";
import { bypassTo } from "../bypass";
import { countHit } from "../counting";

type Ctx = Context<{ Bindings: Env }>;

/**
 * `POST /v1/messages` (Anthropic): the same orchestration as chat completions
 * (exact lookup, single flight through the tree's Durable Object, fail open),
 * over Anthropic canonical messages in trees of their own. It mirrors
 * src/routes/chat/handler.ts rather than sharing it while that file changes.
 */
export async function messages(c: Ctx): Promise<Response> {
  const config = configOf(c.env);
  const headers = c.req.raw.headers;
  const controls = readControls(headers);
  const { raw, body, lossy } = await parseJsonBody(c.req.raw, config.maxBodyBytes, messagesRequest);
  const stream = body.stream === true;
  const tenant = tenantOfRequest(headers, new URL(c.req.url), config.cacheAnonymous);
  const keyed = unlessAnonymous(tenant, lossy ? { ok: false, bypass: lossy } : keyMessagesRequest(body, headers, tenant ?? "", controls.namespace, maxCacheableMessageBytes(c.env.MAX_CACHEABLE_MESSAGE_BYTES)));
  note(c, keyed.ok ? { tree: keyed.key.treeId } : { reason: "bypass" in keyed ? keyed.bypass : "invalid" });
  if (!keyed.ok) {
    if ("invalid" in keyed) throw new ApiError("invalid_request", keyed.invalid.message, keyed.invalid.param);
    if (controls.onlyIfCached) throw notCached();
    return bypass(c, raw);
  }
  const key = keyed.key;
  if (controls.noStore) return bypass(c, raw, key.treeId);

  const view = { model: body.model, stream };
  if (!controls.noCache) {
    const source = lookupSource(c.env, key.treeId, headers);
    if (!source) return bypass(c, raw, key.treeId);
    const found = await lookupAnswer(source, isolate(config).hot, key.key, config.policy, config.lookupTimeoutMs);
    const answer = found.status === "hit" ? anthropicAnswerOf(found.answer) : null;
    if (found.status === "hit" && answer) return serveHit(c, key, found.answer, answer, { ...view, headers: bookmarkHeaders(source, found) });
    if (controls.onlyIfCached) throw notCached();
    if (found.status !== "miss") return bypass(c, raw, key.treeId);
  } else if (controls.onlyIfCached) {
    throw notCached();
  }

  const writer = c.env.TREE_WRITER.get(c.env.TREE_WRITER.idFromName(key.treeId));
  let claim: Claim;
  try {
    claim = controls.noCache ? { role: "alone", reason: "leader-failed" } : await claimOf(writer, key.key, config);
  } catch {
    return bypass(c, raw, key.treeId);
  }
  if (claim.role === "follower") {
    const answer = anthropicAnswerOf(claim.answer);
    if (answer) return serveHit(c, key, claim.answer, answer, { ...view, headers: { "muscle-mem-single-flight": "follower" } });
    return bypass(c, raw, key.treeId);
  }
  const token = claim.role === "leader" ? claim.token : undefined;
  const onSettled = (recording: Recording) => settleGeneration({ writer, treeId: key.treeId, key: key.key, token, hot: isolate(config).hot, recording });
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p.catch(() => undefined));
  return generate({
    request: c.req.raw,
    raw,
    base: config.anthropicBaseUrl,
    baseVar: "ANTHROPIC_BASE_URL",
    pathname: "/v1/messages",
    timeoutMs: config.upstreamTimeoutMs,
    stream,
    outcome: "miss",
    reader: messagesAnswerReader(key, raw.length),
    onSettled,
    waitUntil,
  });
}

function serveHit(c: Ctx, key: AnthropicKey, stored: StoredAnswer, answer: AnthropicAnswer, view: { model: string; stream: boolean; headers?: Record<string, string> }): Response {
  countHit(c, key.treeId, stored);
  return serveMessage(answer, view);
}

/** Sends the request to the Anthropic upstream without the cache: nothing is read or recorded. */
function bypass(c: Ctx, raw: string, treeId?: string): Promise<Response> {
  return bypassTo(c, { base: configOf(c.env).anthropicBaseUrl, pathname: "/v1/messages", baseVar: "ANTHROPIC_BASE_URL" }, raw, treeId);
}
