import { messageRecorded, postMessages } from "./messages.support";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import worker from "../../src/index";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { writeRequestPoint } from "../../src/observability/analytics";
import { lineDisposition, parseLogLevel, requestLine, type RequestLogLine } from "../../src/observability/log";
import type { HitsLogLine } from "../../src/observability/hit-lines";
import { newReport } from "../../src/observability/report";
import { requestIdOf } from "../../src/observability/request-id";
import { chat, eventually, recorded, uniqueModel } from "./helpers";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LINE_KEYS = ["event", "level", "request_id", "method", "route", "status", "outcome", "tree", "reason", "ms"].sort();

let printed: string[] = [];

beforeEach(() => {
  printed = [];
  const capture = (...args: unknown[]) => {
    printed.push(args.map(String).join(" "));
  };
  vi.spyOn(console, "log").mockImplementation(capture);
  vi.spyOn(console, "info").mockImplementation(capture);
  vi.spyOn(console, "warn").mockImplementation(capture);
  vi.spyOn(console, "error").mockImplementation(capture);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The `hits` lines printed so far for `tree`. */
function hitLinesFor(tree: string | null): HitsLogLine[] {
  return printed
    .filter((p) => p.startsWith("{"))
    .map((p) => JSON.parse(p) as HitsLogLine)
    .filter((l) => l.event === "hits" && l.tree === tree);
}

/** The request lines printed so far for `requestId`. */
function linesFor(requestId: string): RequestLogLine[] {
  return printed
    .filter((p) => p.startsWith("{"))
    .map((p) => JSON.parse(p) as RequestLogLine)
    .filter((l) => l.event === "request" && l.request_id === requestId);
}

describe("request logs", () => {
  it("Should name the tree on the Messages API's lines too, a hit's in its tree's hits line", async () => {
    const body = { model: uniqueModel("obs-claude"), max_tokens: 32, messages: [{ role: "user", content: "Refund order #A-1 please" }] };
    const miss = await postMessages(body, { headers: { "x-request-id": "run-43.miss" } });
    await miss.arrayBuffer();
    await messageRecorded(body);
    const hit = await postMessages(body, { headers: { "x-request-id": "run-43.hit" } });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    await hit.arrayBuffer();
    const [missLine] = linesFor("run-43.miss");
    expect(missLine).toMatchObject({ route: "/v1/messages", outcome: "miss" });
    expect(missLine.tree).toMatch(/^[0-9a-f]{16,}$/);
    await eventually(() => hitLinesFor(missLine.tree).length > 0);
    expect(hitLinesFor(missLine.tree)).toEqual([expect.objectContaining({ route: "/v1/messages", outcome: "hit", count: 1 })]);
  });

  it("Should echo a sane x-request-id, log a miss's line with outcome, tree and timings, and gather hits into one line", async () => {
    const model = uniqueModel("obs");
    const body = { model, messages: [{ role: "user", content: "Refund order #A-1 please" }] };
    const miss = await chat(body, { headers: { "x-request-id": "run-42.miss" } });
    expect(miss.headers.get("x-request-id")).toBe("run-42.miss");
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await miss.arrayBuffer();
    await recorded(body);
    for (const i of [1, 2, 3]) {
      const hit = await chat(body, { headers: { "x-request-id": `run-42.hit${i}` } });
      expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
      expect(hit.headers.get("x-request-id")).toBe(`run-42.hit${i}`);
      await hit.arrayBuffer();
    }

    const [missLine, ...moreMiss] = linesFor("run-42.miss");
    expect(moreMiss).toEqual([]);
    expect(Object.keys(missLine).sort()).toEqual(LINE_KEYS);
    expect(missLine).toMatchObject({
      event: "request",
      level: "info",
      method: "POST",
      route: "/v1/chat/completions",
      status: 200,
      reason: null,
      outcome: "miss",
    });
    expect(missLine.tree).toMatch(/^[0-9a-f]{16,}$/);
    expect(missLine.ms.parse).toBeGreaterThanOrEqual(0);
    expect(missLine.ms.lookup).toBeGreaterThanOrEqual(0);
    expect(missLine.ms.total).toBeGreaterThanOrEqual(missLine.ms.parse ?? 0);
    expect(missLine.ms.upstream).toBeGreaterThanOrEqual(0);
    expect(missLine.ms.claim).toBeGreaterThanOrEqual(0);

    // At LOG_LEVEL=info the three hits are no line each, but one `hits` line of their tree (at the counter flush).
    for (const i of [1, 2, 3]) expect(linesFor(`run-42.hit${i}`)).toEqual([]);
    await eventually(() => hitLinesFor(missLine.tree).reduce((n, l) => n + l.count, 0) >= 3);
    const gathered = hitLinesFor(missLine.tree);
    expect(gathered.reduce((n, l) => n + l.count, 0)).toBe(3);
    for (const line of gathered) {
      expect(Object.keys(line).sort()).toEqual(["count", "event", "first_at", "last_at", "level", "ms", "outcome", "route", "tree"]);
      expect(line).toMatchObject({ level: "info", route: "/v1/chat/completions", outcome: "hit" });
      expect(line.ms.max).toBeGreaterThanOrEqual(line.ms.mean);
      expect(Date.parse(line.last_at)).toBeGreaterThanOrEqual(Date.parse(line.first_at));
    }
  });

  it("Should write every hit's own line at LOG_LEVEL=debug", async () => {
    const model = uniqueModel("obs-debug");
    const body = { model, messages: [{ role: "user", content: "Refund order #A-2 please" }] };
    await (await chat(body)).arrayBuffer();
    await recorded(body);
    const ctx = createExecutionContext();
    const request = new Request("http://mm.test/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-test-default", "x-request-id": "run-44.hit" },
      body: JSON.stringify(body),
    });
    const hit = await worker.fetch(request, { ...env, LOG_LEVEL: "debug" } as Env, ctx);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    await hit.arrayBuffer();
    await waitOnExecutionContext(ctx);
    const [line, ...more] = linesFor("run-44.hit");
    expect(more).toEqual([]);
    expect(line).toMatchObject({ event: "request", level: "info", outcome: "hit", status: 200 });
    expect(line.ms.upstream).toBeUndefined();
    expect(line.ms.respond).toBeGreaterThanOrEqual(0);
  });

  it("Should never log the API key or message content", async () => {
    const key = "sk-live-SECRET-7f3a9c";
    const content = "my card is 4242-PURPLE-ELEPHANT";
    const model = uniqueModel("obs");
    const body = { model, messages: [{ role: "user", content }] };
    const streamed = await chat({ ...body, stream: true }, { key, headers: { "x-request-id": "secret-check" } });
    await streamed.text();
    const bypassed = await chat({ ...body, n: 2 }, { key });
    await bypassed.text();
    const bad = await chat({ model, messages: [{ role: "wizard", content }] }, { key });
    expect(bad.status).toBe(400);
    await bad.text();

    expect(linesFor("secret-check")).toHaveLength(1);
    const all = printed.join("\n");
    expect(all).toContain('"event":"request"');
    expect(all).not.toContain("SECRET-7f3a9c");
    expect(all).not.toContain("PURPLE-ELEPHANT");
  });

  it("Should give a fresh id to a request without a sane one, and log bypasses and errors", async () => {
    const model = uniqueModel("obs");
    const bypassed = await chat({ model, n: 2, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-request-id": 'has spaces and "quotes"' } });
    const id = bypassed.headers.get("x-request-id") ?? "";
    expect(id).toMatch(UUID);
    expect(bypassed.headers.get("muscle-mem-cache")).toBe("bypass");
    await bypassed.arrayBuffer();
    expect(linesFor(id)).toEqual([expect.objectContaining({ outcome: "bypass", reason: "n > 1", tree: null, status: 200 })]);
    expect(linesFor(id)[0].ms.upstream).toBeGreaterThanOrEqual(0);

    const broken = await chat("{not json", { headers: { "x-request-id": "broken-1" } });
    expect(broken.status).toBe(400);
    expect(broken.headers.get("x-request-id")).toBe("broken-1");
    await broken.arrayBuffer();
    expect(linesFor("broken-1")).toEqual([expect.objectContaining({ level: "warn", status: 400, outcome: null, route: "/v1/chat/completions" })]);
  });

  it("Should log other routes by their pattern, never their query string", async () => {
    const res = await exports.default.fetch(new Request("http://mm.test/healthz?token=abc123", { headers: { "x-request-id": "health-1" } }));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("health-1");
    expect(linesFor("health-1")).toEqual([expect.objectContaining({ route: "/healthz", method: "GET", outcome: null, tree: null })]);
    expect(printed.join("\n")).not.toContain("abc123");
  });
});

describe("log levels and request ids", () => {
  const line = (status: number) =>
    requestLine({ requestId: "r", method: "POST", route: "/v1/chat/completions", status, outcome: null, follower: false, report: newReport(0), end: 5 });

  it("Should write every line at debug, all but hits at info (gathered), 4xx and 5xx at warn, 5xx at error, none at off", () => {
    const [ok, client, server] = [line(200), line(404), line(502)];
    const hit = { ...ok, outcome: "hit" };
    const miss = { ...ok, outcome: "miss" };
    expect([ok, client, server].map((l) => l.level)).toEqual(["info", "warn", "error"]);
    const at = (level: Parameters<typeof lineDisposition>[0]) => [ok, miss, hit, client, server].map((l) => lineDisposition(level, l));
    expect(at("debug")).toEqual(["write", "write", "write", "write", "write"]);
    expect(at("info")).toEqual(["write", "write", "gather", "write", "write"]);
    expect(at("warn")).toEqual(["skip", "skip", "skip", "write", "write"]);
    expect(at("error")).toEqual(["skip", "skip", "skip", "skip", "write"]);
    expect(at("off")).toEqual(["skip", "skip", "skip", "skip", "skip"]);
    expect([parseLogLevel(" DEBUG "), parseLogLevel(undefined), parseLogLevel("loud")]).toEqual(["debug", "info", "info"]);
  });

  it("Should book the time after the last phase to upstream on a miss and to respond on a follower", () => {
    const report = { ...newReport(0), phases: { parse: 1, lookup: 2 }, lastMark: 3 };
    const base = { requestId: "r", method: "POST", route: "/v1/chat/completions", status: 200, report, end: 10 };
    expect(requestLine({ ...base, outcome: "miss", follower: false }).ms).toEqual({ parse: 1, lookup: 2, upstream: 7, total: 10 });
    expect(requestLine({ ...base, outcome: "miss", follower: true }).ms).toEqual({ parse: 1, lookup: 2, respond: 7, total: 10 });
  });

  it("Should accept only short printable request ids", () => {
    expect(requestIdOf(new Headers({ "x-request-id": "abc-123_x.y:z" }))).toBe("abc-123_x.y:z");
    expect(requestIdOf(new Headers({ "x-request-id": "x".repeat(129) }))).toMatch(UUID);
    expect(requestIdOf(new Headers({ "x-request-id": "a\u00e9b" }))).toMatch(UUID);
    expect(requestIdOf(new Headers())).toMatch(UUID);
  });
});

describe("Analytics Engine", () => {
  it("Should write one data point with outcome, route, tree and timings, and do nothing without a binding", () => {
    const points: AnalyticsEngineDataPoint[] = [];
    const dataset: AnalyticsEngineDataset = { writeDataPoint: (p) => void points.push(p ?? {}) };
    const line: RequestLogLine = {
      event: "request",
      level: "info",
      request_id: "r",
      method: "POST",
      route: "/v1/chat/completions",
      status: 200,
      outcome: "hit",
      tree: "t1",
      reason: null,
      ms: { lookup: 2, total: 5 },
    };
    writeRequestPoint(dataset, line);
    expect(points).toEqual([{ indexes: ["t1"], blobs: ["hit", "/v1/chat/completions", "t1", ""], doubles: [5, 2, 0, 200] }]);
    expect(() => writeRequestPoint(undefined, line)).not.toThrow();
  });
});
