import type { Context } from "hono";
import { overBytes } from "../core/limits";
import type { ProviderAdapter, ProviderKey, ProviderRequest, TemplatePlan } from "../cache/provider";
import type { Config } from "../config";
import type { TreeWriter } from "../store/objects/tree-writer";
import type { CacheControls } from "./controls";
import type { WorkerEnv } from "./services";
import { settleGeneration } from "./claim";
import { coloCache } from "./lookup/colo-cache";
import { childlessMemory } from "./lookup/childless";
import { generate, type Recording } from "./generation";
import { trackWrite } from "./pending-writes";
import { noteAccepted, providerOfBase } from "./key-freshness";
import { receivesEveryCredential } from "../upstream/forward";
import { tenantOf } from "../core/hash";

/** The tenant of requests without a credential (CACHE_ANONYMOUS): no key to check with a provider. */
const ANONYMOUS = tenantOf(null);

export type Ctx = Context<WorkerEnv>;

/** One request on its way through the flow: what every step reads. */
export interface Walk<B, K extends ProviderKey, A> {
  c: Ctx;
  adapter: ProviderAdapter<B, K, A>;
  config: Config;
  controls: CacheControls;
  request: ProviderRequest<B>;
  stream: boolean;
}

/**
 * Sends a miss to the model and records its answer through the tree's object (which serves the followers):
 * the stub that claimed, so that a record never reaches an object that did not see the claim (after a reset).
 */
export function generation<B, K extends ProviderKey, A>(
  walk: Walk<B, K, A>,
  plan: TemplatePlan<K>,
  db: D1Database,
  writer: DurableObjectStub<TreeWriter>,
  /** The claim's token when this request leads its flight (a fast miss learns it beside the upstream request). */
  tokenOf: () => Promise<string | undefined>,
  /** Runs once the generation has settled (recorded, or its claim released). */
  done?: () => void,
): Promise<Response> {
  const { c, adapter, config, request } = walk;
  const key = plan.key;
  const after = plan.afterRecord;
  const onSettled = async (recording: Recording) => {
    try {
      await settle(recording);
    } finally {
      done?.();
    }
  };
  const settle = async (recording: Recording) => {
    // A complete answer from the upstream: its provider accepted this credential just now (this isolate knows
    // it before the recording lands; D1 is told beside it, never ahead of the recording).
    const tenant = key.tenant === ANONYMOUS ? null : key.tenant;
    const whole = receivesEveryCredential(c.req.raw.headers, target.baseVar, c.req.url);
    const noted = recording ? noteAccepted(c.env.DB, config.access, tenant, providerOfBase(target.baseVar), whole) : undefined;
    // What the plan stores of the answer (a declared tree's answer with placeholders), or nothing (then unrecorded).
    const kept = storable(recording && plan.recording ? plan.recording(recording) : recording, config.maxCacheableMessageBytes);
    await settleGeneration({
      writer,
      treeId: key.treeId,
      key: key.key,
      token: await tokenOf(),
      hot: c.var.services.isolate.hot,
      childless: childlessMemory(config.hotCacheTtlMs),
      colo: coloCache(config.coloCacheTtlMs),
      recording: kept,
      afterRecord: after && ((recorded) => after(recorded, db)),
    });
    // An answer that was not recorded is still evidence for templates (a declared answer that cannot be stored).
    if (!kept) await plan.afterUnrecorded?.(db);
    await noted;
  };
  const target = adapter.upstream(config, request);
  return generate({
    request: c.req.raw,
    raw: adapter.upstreamBody?.(request) ?? request.raw,
    base: target.base,
    pathname: target.pathname,
    search: target.search,
    baseVar: target.baseVar,
    errorResponse: (error, headers) => adapter.errorResponse(error, headers),
    timeoutMs: config.upstreamTimeoutMs,
    // A stream is read at most this far ahead of a slow client (the bound of one stored message): past it, no recording.
    readAheadBytes: config.maxCacheableMessageBytes,
    stream: walk.stream,
    outcome: "miss",
    reader: adapter.reader(key, request),
    onSettled,
    settling: (settled) => trackWrite(key.tenant, settled),
    waitUntil: (p) => c.executionCtx.waitUntil(p.catch(() => undefined)),
  });
}

/**
 * The recording, or null when its answer's stored form is over MAX_CACHEABLE_MESSAGE_BYTES: the key bounds
 * the path's messages, but an answer also stores what the upstream sent around it (its envelope: vLLM's
 * `prompt_logprobs`, …), and D1 rejects a row over 1 MB, so such a record would fail on every repeat.
 */
function storable(recording: Recording, maxBytes: number): Recording {
  return recording && overBytes(recording.answer.json, maxBytes) ? null : recording;
}
