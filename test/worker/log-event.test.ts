import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { faultBase } from "./faults.support";

let printed: string[] = [];

beforeEach(() => {
  printed = [];
  for (const stream of ["log", "warn", "error"] as const)
    vi.spyOn(console, stream).mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(" ")));
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A pass-through call to an unreachable upstream (it logs `upstream_unreachable`), at `LOG_LEVEL`. */
async function unreachable(requestId: string, level: string): Promise<Record<string, unknown>[]> {
  const ctx = createExecutionContext();
  const request = new Request("http://mm.test/v1/models", { headers: { authorization: "Bearer sk-log-event", "x-request-id": requestId } });
  const res = await worker.fetch(request, { ...env, UPSTREAM_BASE_URL: faultBase("reset").base, LOG_LEVEL: level } as Env, ctx);
  expect(res.status).toBe(502);
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return printed
    .filter((p) => p.startsWith("{"))
    .map((p) => JSON.parse(p) as Record<string, unknown>)
    .filter((l) => l.event === "upstream_unreachable");
}

describe("event lines in a request", () => {
  it("Should carry the request's id and level", async () => {
    const lines = await unreachable("run-log-event.1", "info");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: "upstream_unreachable", level: "error", request_id: "run-log-event.1", var: "UPSTREAM_BASE_URL" });
  });

  it("Should write none at LOG_LEVEL=off", async () => {
    expect(await unreachable("run-log-event.2", "off")).toEqual([]);
  });
});
