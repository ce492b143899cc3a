import type { Context, Env as HonoEnv } from "hono";
import type { MissExplanation } from "../core/explanation";

/** Named phases of a request, in the order a chat request goes through them. */
export type Phase = "parse" | "lookup" | "claim";

/** What a route handler tells the request log about its request (never keys or content). */
export interface RequestReport {
  /** The tree the request was keyed to, and its tenant. */
  tree?: string;
  tenant?: string;
  /** Why the cache was bypassed, when it was (`n>1`, `image`, `lookup_failed`, …). */
  reason?: string;
  /** What served a hit: the recorded answer's node (none for a learned template) and the tokens it saved. */
  served?: { node: string | null; promptTokens: number; completionTokens: number };
  /**
   * A miss: the `muscle-mem-miss` value known before the response, and the work that explains it after
   * the response (given the `muscle-mem-template-miss` reason, when there is one).
   */
  miss?: { header: string; explain: (template: string | null) => Promise<MissExplanation> };
  /** Milliseconds per phase, each measured from the end of the previous one. */
  phases: Partial<Record<Phase, number>>;
  /** When the request started, and when the last phase ended (ms, `Date.now()`). */
  startedAt: number;
  lastMark: number;
}

declare module "hono" {
  interface ContextVariableMap {
    /** Set by the observability middleware; route handlers add to it with `note` and `phase`. */
    mm: RequestReport;
    requestId: string;
  }
}

/** A fresh report, started now. */
export function newReport(now = Date.now()): RequestReport {
  return { phases: {}, startedAt: now, lastMark: now };
}

function reportOf<E extends HonoEnv>(c: Context<E>): RequestReport | undefined {
  return c.get("mm") as RequestReport | undefined;
}

/**
 * Adds facts to the request's log line; a no-op when the middleware is not installed.
 *
 * @example note(c, { tree: key.treeId })
 */
export function note<E extends HonoEnv>(c: Context<E>, facts: { tree?: string; tenant?: string; reason?: string }): void {
  const report = reportOf(c);
  if (!report) return;
  if (facts.tree !== undefined) report.tree = facts.tree;
  if (facts.tenant !== undefined) report.tenant = facts.tenant;
  if (facts.reason !== undefined) report.reason = facts.reason;
}

/**
 * Ends a phase: the time since the previous mark (or the start) is booked to `name`.
 *
 * @example phase(c, "lookup", { reason: failed ? "lookup_failed" : undefined }) // after the D1 read
 */
export function phase<E extends HonoEnv>(c: Context<E>, name: Phase, facts: { tree?: string; reason?: string } = {}, now = Date.now()): void {
  const report = reportOf(c);
  if (!report) return;
  note(c, facts);
  report.phases[name] = (report.phases[name] ?? 0) + (now - report.lastMark);
  report.lastMark = now;
}

/**
 * Tells the request log what a miss knew before the response (`muscle-mem-miss`) and how to explain it after.
 *
 * @example missed(c, { header: "new-branch; depth=3", explain: () => explainAfterResponse(input) })
 */
export function missed<E extends HonoEnv>(c: Context<E>, miss: NonNullable<RequestReport["miss"]>): void {
  const report = reportOf(c);
  if (report) report.miss = miss;
}

/**
 * Tells the request log (and the recent-requests view) what served a hit.
 *
 * @example served(c, { node: answer.hash, promptTokens: 12, completionTokens: 30 })
 */
export function served<E extends HonoEnv>(c: Context<E>, facts: { node: string | null; promptTokens: number; completionTokens: number }): void {
  const report = reportOf(c);
  if (report) report.served = facts;
}
