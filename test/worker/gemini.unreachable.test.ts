import { describe, expect, it } from "vitest";
import { callWorker, faultBase } from "./faults.support";
import { uniqueModel } from "./helpers";

/** A Gemini request as `@google/genai` sends it, streamed with `alt=sse` when asked. */
function geminiRequest(model: string, init: { stream?: boolean; headers?: Record<string, string> } = {}): Request {
  const action = init.stream ? "streamGenerateContent?alt=sse" : "generateContent";
  return new Request(`http://mm.test/v1beta/models/${model}:${action}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "gm-key-unreachable", ...init.headers },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
  });
}

describe("Gemini with its upstream unreachable", () => {
  it.each([
    ["a miss", {}, "miss"],
    ["a streamed miss", { stream: true }, "miss"],
    ["a bypass (no-store)", { headers: { "cache-control": "no-store" } }, "bypass"],
  ] as const)("Should answer %s with a 502 in Gemini's envelope naming GEMINI_BASE_URL", async (_, init, outcome) => {
    const { base } = faultBase("reset");
    const call = await callWorker(geminiRequest(uniqueModel("reset"), init), { GEMINI_BASE_URL: base });
    expect(call.res.status).toBe(502);
    expect(call.res.headers.get("muscle-mem-cache")).toBe(outcome);
    const { error } = (await call.res.json()) as { error: { code: number; status: string; message: string } };
    expect(error).toMatchObject({ code: 502, status: "UNAVAILABLE" });
    expect(error.message).toContain("GEMINI_BASE_URL");
    await call.settled();
  });
});
