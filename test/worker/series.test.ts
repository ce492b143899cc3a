import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { SCRIPTED_ROWS, type SeenQuery } from "../../tools/analytics-upstream";

/**
 * GET /api/series against the SQL API stand-in of the test upstream
 * (tools/analytics-upstream.ts), with the analytics vars passed per call as
 * test/worker/faults.support.ts does for the upstream.
 */
type SeriesVars = Partial<Record<"ANALYTICS_ACCOUNT_ID" | "ANALYTICS_API_TOKEN" | "ANALYTICS_DATASET" | "ANALYTICS_SQL_URL" | "ANALYTICS_TIMEOUT_MS", string>>;

const ADMIN = "test-admin-token";
const ACCOUNT = "0123456789abcdef0123456789abcdef";
const TOKEN = "analytics-secret-token-value";

interface Envelope {
  error: { message: string; type: string; code: string; param: string | null };
}
interface Point {
  t: string;
  hits: number;
  misses: number;
  bypasses: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

async function series(query: string, vars: SeriesVars, key = ADMIN): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`http://mm.test/api/series${query}`, { headers: { authorization: `Bearer ${key}` } });
  const res = await worker.fetch(request, { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** Vars for a configured Worker whose SQL API is the stand-in in `mode`, under a fresh tag. */
function configured(mode: string, extra: SeriesVars = {}): { vars: SeriesVars; tag: string } {
  const tag = crypto.randomUUID().slice(0, 8);
  const url = `${env.UPSTREAM_TEST_URL}/__analytics/${mode}/${tag}/client/v4/accounts/{id}/analytics_engine/sql`;
  return { tag, vars: { ANALYTICS_ACCOUNT_ID: ACCOUNT, ANALYTICS_API_TOKEN: TOKEN, ANALYTICS_SQL_URL: url, ...extra } };
}

async function seen(tag: string): Promise<SeenQuery[]> {
  const res = await fetch(`${env.UPSTREAM_TEST_URL}/__analytics/seen/${tag}`);
  return (await res.json()) as SeenQuery[];
}

async function envelope(res: Response): Promise<Envelope["error"]> {
  const body = (await res.json()) as Envelope;
  expect(Object.keys(body)).toEqual(["error"]);
  return body.error;
}

describe("GET /api/series", () => {
  it("Should answer 501 analytics_not_configured naming the var and the secret when neither is set", async () => {
    const res = await series("?minutes=60", {});
    expect(res.status).toBe(501);
    const error = await envelope(res);
    expect(error.code).toBe("analytics_not_configured");
    expect(error.type).toBe("not_configured_error");
    expect(error.message).toContain("ANALYTICS_ACCOUNT_ID");
    expect(error.message).toContain("ANALYTICS_API_TOKEN");
    expect(error.message).toContain("docs/deploy.md");
  });

  it("Should name only what is missing, and refuse a malformed account id or dataset, without calling the SQL API", async () => {
    const { vars, tag } = configured("ok");
    const noToken = await envelope(await series("", { ...vars, ANALYTICS_API_TOKEN: "" }));
    expect(noToken.code).toBe("analytics_not_configured");
    expect(noToken.message).toContain("ANALYTICS_API_TOKEN");
    expect(noToken.message).not.toContain("ANALYTICS_ACCOUNT_ID");
    const badAccount = await series("", { ...vars, ANALYTICS_ACCOUNT_ID: "not-an-account" });
    expect(badAccount.status).toBe(501);
    expect((await envelope(badAccount)).message).toContain("ANALYTICS_ACCOUNT_ID must be");
    const badDataset = await series("", { ...vars, ANALYTICS_DATASET: "muscle_mem; DROP TABLE x" });
    expect(badDataset.status).toBe(501);
    expect((await envelope(badDataset)).message).toContain("ANALYTICS_DATASET");
    expect(await seen(tag)).toEqual([]);
  });

  it("Should query the SQL API with the token and the account's URL, and shape the rows into one point per step", async () => {
    const { vars, tag } = configured("ok");
    const res = await series("?minutes=60&step=5", vars);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { step_minutes: number; points: Point[] };
    expect(body.step_minutes).toBe(5);
    expect(body.points).toHaveLength(12);
    const [query] = await seen(tag);
    expect(query.authorization).toBe(`Bearer ${TOKEN}`);
    expect(query.path).toBe(`/__analytics/ok/${tag}/client/v4/accounts/${ACCOUNT}/analytics_engine/sql`);
    const start = Number(/toDateTime\((\d+)\)/.exec(query.sql)?.[1]);
    const end = Number(/timestamp < toDateTime\((\d+)\)/.exec(query.sql)?.[1]);
    expect(end - start).toBe(12 * 300);
    expect(start % 300).toBe(0);
    expect(query.sql).toContain("INTERVAL '5' MINUTE");
    expect(query.sql).toContain("FROM muscle_mem\n");
    expect(query.sql).toContain("SUM(IF(blob1 = 'hit', _sample_interval, 0)) AS hits");
    expect(query.sql).toContain("quantileExactWeighted(0.5)(double1, _sample_interval) AS p50_ms");
    expect(body.points.map((p) => Date.parse(p.t) / 1000)).toEqual(Array.from({ length: 12 }, (_, i) => start + i * 300));
    const [first, third] = SCRIPTED_ROWS;
    expect(body.points[0]).toEqual({
      t: new Date(start * 1000).toISOString().replace(".000Z", "Z"),
      hits: Number(first.hits),
      misses: 1,
      bypasses: 0,
      p50_ms: 12.5,
      p99_ms: 40,
    });
    expect(body.points[2]).toMatchObject({ hits: Number(third.hits), misses: 0, bypasses: 2, p50_ms: 3, p99_ms: 9.3 });
    expect(body.points[1]).toMatchObject({ hits: 0, misses: 0, bypasses: 0, p50_ms: null, p99_ms: null });
    expect(JSON.stringify(body)).not.toContain(TOKEN);
  });

  it("Should read the dataset from ANALYTICS_DATASET and choose a step when none is given", async () => {
    const { vars, tag } = configured("empty", { ANALYTICS_DATASET: "muscle_mem_staging" });
    const res = await series("?minutes=1440", vars);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { step_minutes: number; points: Point[] };
    expect(body.step_minutes).toBe(15);
    expect(body.points).toHaveLength(96);
    expect(body.points.every((p) => p.hits + p.misses + p.bypasses === 0 && p.p50_ms === null)).toBe(true);
    const [query] = await seen(tag);
    expect(query.sql).toContain("FROM muscle_mem_staging\n");
    expect(query.sql).toContain("INTERVAL '15' MINUTE");
  });

  it("Should answer 400 naming the parameter for bad or unbounded params, before any query", async () => {
    const { vars, tag } = configured("ok");
    const cases: Array<[string, string]> = [
      ["?minutes=4", "minutes"],
      ["?minutes=10081", "minutes"],
      ["?minutes=abc", "minutes"],
      ["?minutes=60.5", "minutes"],
      ["?minutes=60&step=7", "step"],
      ["?minutes=60&step=0", "step"],
      ["?minutes=60&step=1)%20OR%201=1", "step"],
      ["?minutes=10080&step=1", "step"],
    ];
    for (const [query, param] of cases) {
      const res = await series(query, vars);
      expect(res.status, query).toBe(400);
      const error = await envelope(res);
      expect(error.code, query).toBe("invalid_request");
      expect(error.param, query).toBe(param);
    }
    expect(await seen(tag)).toEqual([]);
  });

  it("Should answer 502 analytics_unavailable when the SQL API fails, without leaking the token", async () => {
    for (const mode of ["error-500", "error-422", "html"]) {
      const { vars, tag } = configured(mode);
      const res = await series("?minutes=60", vars);
      expect(res.status, mode).toBe(502);
      const text = await res.clone().text();
      expect(text).not.toContain(TOKEN);
      const error = await envelope(res);
      expect(error.code, mode).toBe("analytics_unavailable");
      expect(error.type).toBe("upstream_error");
      if (mode.startsWith("error-")) expect(error.message).toContain(`answered ${mode.slice(6)}`);
      expect(await seen(tag)).toHaveLength(1);
    }
  });

  it("Should answer 502 when the SQL API does not answer in ANALYTICS_TIMEOUT_MS, or cannot be reached", async () => {
    const { vars } = configured("hang", { ANALYTICS_TIMEOUT_MS: "300" });
    const hung = await series("?minutes=60", vars);
    expect(hung.status).toBe(502);
    expect((await envelope(hung)).message).toContain("did not answer within 300 ms");
    const closed = await series("?minutes=60", { ...vars, ANALYTICS_SQL_URL: "http://127.0.0.1:1/accounts/{id}/sql" });
    expect(closed.status).toBe(502);
    expect((await envelope(closed)).code).toBe("analytics_unavailable");
  });

  it("Should answer 401 without a bearer credential and 403 forbidden to a tenant key, without querying", async () => {
    const { vars, tag } = configured("ok");
    const ctx = createExecutionContext();
    const anonymous = await worker.fetch(new Request("http://mm.test/api/series"), { ...env, ...vars } as Env, ctx);
    expect(anonymous.status).toBe(401);
    expect((await envelope(anonymous)).code).toBe("unauthorized");
    const tenant = await series("?minutes=60", vars, "sk-some-tenant");
    expect(tenant.status).toBe(403);
    const error = await envelope(tenant);
    expect(error.code).toBe("forbidden");
    expect(error.type).toBe("permission_error");
    expect(error.message).toContain("admin token");
    // Even unconfigured, a tenant learns nothing about the operator's analytics setup.
    const unconfigured = await series("?minutes=60", {}, "sk-some-tenant");
    expect(unconfigured.status).toBe(403);
    expect(await seen(tag)).toEqual([]);
  });
});
