import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { logEvent, withLogContext } from "../../src/observability/log-event";

let printed: { stream: string; line: Record<string, unknown> }[] = [];

beforeEach(() => {
  printed = [];
  for (const stream of ["log", "warn", "error"] as const) {
    vi.spyOn(console, stream).mockImplementation((text: unknown) => void printed.push({ stream, line: JSON.parse(String(text)) as Record<string, unknown> }));
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("logEvent", () => {
  it("Should write one JSON line with the event, its level and the fields", () => {
    logEvent("error", "record_failed", { tree: "t1", error: "boom" });
    expect(printed).toEqual([{ stream: "error", line: { event: "record_failed", level: "error", tree: "t1", error: "boom" } }]);
  });

  it("Should carry the running request's id, also in work that outlives the call", async () => {
    await withLogContext({ requestId: "run-7", level: "info" }, async () => {
      await Promise.resolve();
      logEvent("warn", "slow", { ms: 3 });
    });
    expect(printed).toEqual([{ stream: "warn", line: { event: "slow", level: "warn", request_id: "run-7", ms: 3 } }]);
  });

  it("Should write only events at or above LOG_LEVEL", () => {
    withLogContext({ requestId: "r", level: "warn" }, () => {
      logEvent("debug", "a");
      logEvent("info", "b");
      logEvent("warn", "c");
      logEvent("error", "d");
    });
    withLogContext({ level: "off" }, () => logEvent("error", "e"));
    expect(printed.map((p) => p.line.event)).toEqual(["c", "d"]);
  });

  it("Should write info and above outside any request (cron, Durable Objects)", () => {
    logEvent("debug", "quiet");
    logEvent("info", "scheduled_prune", { trees: 2 });
    expect(printed).toEqual([{ stream: "log", line: { event: "scheduled_prune", level: "info", trees: 2 } }]);
  });
});
