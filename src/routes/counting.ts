import type { Context } from "hono";
import { configOf } from "../config";
import { isolate } from "../isolate";
import { logEvent } from "../observability/log-event";
import { served } from "../observability/report";
import { sendTallies } from "../store/send-tallies";

type Ctx = Context<{ Bindings: Env }>;

/** Counts a hit in isolate memory and schedules the flush (the chat and messages routes). */
export function countHit(c: Ctx, treeId: string, answer: { hash: string; promptTokens: number; completionTokens: number; latencyMs: number }, templateId?: string): void {
  const { counters } = isolate(configOf(c.env));
  counters.hit(treeId, answer.hash, answer);
  if (templateId) counters.templateHit(treeId, templateId);
  // A learned template renders its answer: there is no stored node to link to.
  served(c, { node: templateId ? null : answer.hash, promptTokens: answer.promptTokens, completionTokens: answer.completionTokens });
  scheduleFlush(c);
}

/** Counts a bypass of a keyed request and schedules the flush. */
export function countBypass(c: Ctx, treeId: string): void {
  isolate(configOf(c.env)).counters.bypass(treeId);
  scheduleFlush(c);
}

/**
 * Hands buffered counters (and recent requests) to each tree's HitTally object
 * off the response path, at most once per flush interval; the objects write D1.
 */
export function scheduleFlush(c: Ctx): void {
  const config = configOf(c.env);
  const { counters } = isolate(config);
  if (!counters.due()) return;
  counters.markScheduled();
  c.executionCtx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, config.counterFlushMs))
      .then(() => sendTallies(c.env, counters.drain(), config.tallyFlushMs))
      .catch((error) => logEvent("error", "counter_flush_failed", { error: String(error) })),
  );
}
