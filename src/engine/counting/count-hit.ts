import type { Context } from "hono";
import { scheduleFlush } from "../isolate";
import type { WorkerEnv } from "../services";
import { served } from "../../observability/report";

type Ctx = Context<WorkerEnv>;

/** Counts a hit in isolate memory and schedules the flush (the chat and messages routes). */
export function countHit(
  c: Ctx,
  treeId: string,
  answer: { hash: string; promptTokens: number; completionTokens: number; latencyMs: number },
  templateId?: string,
): void {
  const { config, isolate } = c.var.services;
  const { counters } = isolate;
  counters.hit(treeId, answer.hash, answer);
  if (templateId) counters.templateHit(treeId, templateId);
  // A learned template renders its answer: there is no stored node to link to.
  served(c, { node: templateId ? null : answer.hash, promptTokens: answer.promptTokens, completionTokens: answer.completionTokens });
  scheduleFlush(c.env, config, c.executionCtx);
}

/** Counts a bypass of a keyed request and schedules the flush. */
export function countBypass(c: Ctx, treeId: string): void {
  const { config, isolate } = c.var.services;
  isolate.counters.bypass(treeId);
  scheduleFlush(c.env, config, c.executionCtx);
}
