import { z } from "zod";
import type { Config } from "../../config";
import { ApiError } from "../../core/errors";
import {
  DATASET_NAME,
  MAX_MINUTES,
  MAX_POINTS,
  MIN_MINUTES,
  STEPS,
  defaultStep,
  seriesSql,
  seriesWindow,
  shapeSeries,
  sqlAnswer,
} from "../../observability/series";
import { parseWith, type ApiCtx } from "./params";

/** The SQL API endpoint; `{id}` is replaced by ANALYTICS_ACCOUNT_ID. */
export const DEFAULT_SQL_URL = "https://api.cloudflare.com/client/v4/accounts/{id}/analytics_engine/sql";
const DEFAULT_DATASET = "muscle_mem";
const ACCOUNT_ID = /^[0-9a-f]{32}$/;
const HOW = 'see docs/deploy.md "Hit, miss and latency series"';

const seriesQuery = z
  .object({
    minutes: z.coerce.number().int().min(MIN_MINUTES).max(MAX_MINUTES).default(60),
    step: z.coerce
      .number()
      .int()
      .refine((s) => (STEPS as readonly number[]).includes(s), `must be one of ${STEPS.join(", ")} (minutes)`)
      .optional(),
  })
  .refine((q) => q.step === undefined || Math.ceil(q.minutes / q.step) <= MAX_POINTS, {
    message: `at most ${MAX_POINTS} points: use a larger step for this many minutes`,
    path: ["step"],
  });

/** Where and how to reach the SQL API, from the Worker's vars and secret. */
interface AnalyticsSource {
  url: string;
  token: string;
  dataset: string;
  timeoutMs: number;
}

/** The configured source, or a 501 naming what the operator must set. */
export function sourceOf(analytics: Config["analytics"]): AnalyticsSource {
  const { accountId: account, apiToken: token, dataset: datasetVar, sqlUrl, timeoutMs } = analytics;
  const missing = [account ? null : "the var ANALYTICS_ACCOUNT_ID", token ? null : "the secret ANALYTICS_API_TOKEN (Account Analytics: Read)"].filter(
    (m) => m !== null,
  );
  if (missing.length > 0) throw new ApiError("analytics_not_configured", `Traffic series read Workers Analytics Engine: set ${missing.join(" and ")}; ${HOW}.`);
  if (!ACCOUNT_ID.test(account))
    throw new ApiError("analytics_not_configured", `ANALYTICS_ACCOUNT_ID must be a Cloudflare account id (32 lowercase hex characters); ${HOW}.`);
  const dataset = datasetVar || DEFAULT_DATASET;
  if (!DATASET_NAME.test(dataset)) throw new ApiError("analytics_not_configured", `ANALYTICS_DATASET must be a dataset name (letters, digits, _); ${HOW}.`);
  return {
    url: (sqlUrl || DEFAULT_SQL_URL).replace("{id}", account),
    token,
    dataset,
    timeoutMs,
  };
}

/** Printable, short: an upstream error text fit for the envelope's message. */
function excerpt(text: string): string {
  return text
    .replace(/[^\x20-\x7e]+/g, " ")
    .trim()
    .slice(0, 200);
}

/** Sends the query; every failure becomes a 502 `analytics_unavailable` (the token never appears). */
async function runQuery(source: AnalyticsSource, sql: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(source.url, {
      method: "POST",
      headers: { authorization: `Bearer ${source.token}`, "content-type": "text/plain" },
      body: sql,
      signal: AbortSignal.timeout(source.timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    throw new ApiError(
      "analytics_unavailable",
      timedOut ? `Analytics Engine's SQL API did not answer within ${source.timeoutMs} ms.` : "Analytics Engine's SQL API could not be reached.",
    );
  }
  const text = await res.text().catch(() => "");
  if (!res.ok) throw new ApiError("analytics_unavailable", `Analytics Engine's SQL API answered ${res.status}: ${excerpt(text) || "no body"}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("analytics_unavailable", "Analytics Engine's SQL API answered something other than JSON.");
  }
}

/**
 * `GET /api/series?minutes=60&step=1`: hits, misses, bypasses and p50/p99
 * latency per step from Workers Analytics Engine, queried server-side so the
 * browser never holds the account's analytics token. Admin only: the data
 * points carry no tenant (docs/api.md), so a tenant key gets 403.
 */
export async function getSeries(c: ApiCtx): Promise<Response> {
  if (!c.var.caller.admin)
    throw new ApiError("forbidden", "Traffic series cover every tenant: they need the admin token. A tenant key can read GET /api/stats.");
  const q = parseWith(seriesQuery, c.req.query());
  const source = sourceOf(c.var.services.config.analytics);
  const window = seriesWindow(q.minutes, q.step ?? defaultStep(q.minutes), Date.now());
  const json = await runQuery(source, seriesSql(source.dataset, window));
  const answer = sqlAnswer.safeParse(json);
  if (!answer.success) throw new ApiError("analytics_unavailable", "Analytics Engine's SQL API answered rows of an unexpected shape.");
  return c.json(shapeSeries(answer.data, window), 200, { "cache-control": "no-store" });
}
