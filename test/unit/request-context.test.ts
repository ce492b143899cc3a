import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { logEvent, withLogContext } from "../../src/observability/log-event";
import { addD1, loggedStoreWork, newStoreCost, runMetered } from "../../src/observability/store-meter";

let printed: Record<string, unknown>[] = [];

beforeEach(() => {
  printed = [];
  for (const stream of ["log", "warn", "error"] as const) {
    vi.spyOn(console, stream).mockImplementation((text: unknown) => void printed.push(JSON.parse(String(text)) as Record<string, unknown>));
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});

const d1 = { queries: 2, ms: 5, rowsRead: 3, rowsWritten: 1 };

describe("one context for a request's log lines and its store meter", () => {
  it("Should keep the request id and level inside a meter entered later, also after an await", async () => {
    const cost = newStoreCost();
    await withLogContext({ requestId: "r-1", level: "warn" }, () =>
      runMetered(cost, async () => {
        await Promise.resolve();
        logEvent("info", "quiet");
        logEvent("warn", "loud");
        addD1(d1);
      }),
    );
    expect(printed).toEqual([{ event: "loud", level: "warn", request_id: "r-1" }]);
    expect(cost.d1).toEqual(d1);
  });

  it("Should keep the meter inside a log context entered later", async () => {
    const cost = newStoreCost();
    await runMetered(cost, () =>
      withLogContext({ requestId: "r-2", level: "info" }, async () => {
        await Promise.resolve();
        addD1(d1);
        logEvent("info", "seen");
      }),
    );
    expect(cost.d1).toEqual(d1);
    expect(printed).toEqual([{ event: "seen", level: "info", request_id: "r-2" }]);
  });

  it("Should log no request id and info's lines in a meter entered outside any request", async () => {
    await runMetered(newStoreCost(), async () => {
      logEvent("debug", "hidden");
      logEvent("info", "shown");
    });
    expect(printed).toEqual([{ event: "shown", level: "info" }]);
  });

  it("Should write an object call's store_work line at debug only, with what the call did to D1", async () => {
    await loggedStoreWork("info", "writer", "record", async () => addD1(d1));
    expect(printed).toEqual([]);
    await loggedStoreWork("debug", "writer", "record", async () => addD1(d1));
    expect(printed).toEqual([
      { event: "store_work", level: "debug", object: "writer", call: "record", d1_queries: 2, d1_ms: 5, d1_rows_read: 3, d1_rows_written: 1, do_calls: 0 },
    ]);
  });
});
