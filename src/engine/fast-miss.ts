import { withTimeout } from "../core/deadline";
import { logEvent } from "../observability/log-event";
import type { Joined } from "../store/objects/single-flight";
import type { TreeWriter } from "../store/objects/tree-writer";
import type { ProviderKey, TemplatePlan } from "../cache/provider";
import { missed } from "../observability/report";
import { explainAfterResponse, fastMissBefore, missHeader } from "./explain/miss";
import { childlessMemory, countFastJoin } from "./lookup/childless";
import { generation, type Walk } from "./miss-generation";

/**
 * A fast miss's single-flight join, made beside its upstream request (already sent): the claim's token when
 * this request leads, else undefined. Another leader (`waiting`) or a recent answer (`follower`) means a
 * duplicate generation in the race window: counted (`fastJoins`) and logged (`fast_miss_duplicate`), and the
 * generation is still recorded, as one more observation. A join that fails or outlasts LOOKUP_TIMEOUT_MS
 * is counted too; when it made this request the leader after all, the claim is released at once, so that no
 * one waits out a lease for an answer that will be recorded without it. Never rejects.
 */
export function joinBeside(
  writer: DurableObjectStub<TreeWriter>,
  key: string,
  treeId: string,
  timeoutMs: number,
  defer: (work: Promise<unknown>) => void,
): Promise<string | undefined> {
  // SAFETY: RPC types a union result as a stub; Joined is plain data (structured clone), so the cast only unwraps that type.
  const call = writer.join(key) as unknown as Promise<Joined>;
  return withTimeout(call, timeoutMs, "fast-miss join").then(
    (joined) => {
      if (joined.role === "leader") {
        countFastJoin("leader");
        return joined.token;
      }
      countFastJoin("duplicate");
      logEvent("info", "fast_miss_duplicate", { tree: treeId, role: joined.role });
      return undefined;
    },
    (error: unknown) => {
      countFastJoin("failed");
      logEvent("warn", "fast_miss_join_failed", { tree: treeId, error: String(error) });
      const release = call.then(async (late) => {
        if (late.role === "leader") await writer.release(key, late.token);
      });
      defer(release.catch(() => undefined));
      return undefined;
    },
  );
}

/**
 * A fast miss: the request's path runs through a leaf this isolate knows to be childless, so it is sent to
 * the model with no store call before it; the single-flight join goes beside the upstream request (already
 * sent), and the recording after the response is the same as any miss's. Nothing is ever served here.
 */
export function fastMiss<B, K extends ProviderKey, A>(
  walk: Walk<B, K, A>,
  plan: TemplatePlan<K>,
  db: D1Database,
  writer: DurableObjectStub<TreeWriter>,
  depth: number,
): Promise<Response> {
  const { c, config } = walk;
  const key = plan.key;
  const startedAt = c.get("mm")?.startedAt ?? Date.now();
  const before = fastMissBefore(key.path.length, depth);
  missed(c, {
    header: missHeader(before),
    explain: (template) =>
      explainAfterResponse({ db, key, startedAt, timeoutMs: config.lookupTimeoutMs, template, before, fast: true, request: walk.request.body }),
  });
  let token: Promise<string | undefined> = Promise.resolve(undefined);
  const defer = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  const response = generation(
    walk,
    plan,
    db,
    writer,
    () => token,
    () => childlessMemory(config.hotCacheTtlMs).end(key.key),
  );
  token = joinBeside(writer, key.key, key.treeId, config.lookupTimeoutMs, defer);
  return response;
}
