import { describe, expect, it } from "vitest";
import { gemini } from "./gemini.support";

describe("Gemini generateContent: errors in Gemini's envelope", () => {
  it("Should answer malformed JSON with a 400 {error:{code,message,status}}", async () => {
    const res = await gemini("gem-bad", "{nope");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 400, message: "The request body is not valid JSON.", status: "INVALID_ARGUMENT" } });
  });

  it("Should answer a wrong shape and a nameless function call with a 400 naming the field", async () => {
    const noContents = await gemini("gem-bad", { contents: [] });
    expect(noContents.status).toBe(400);
    expect(await noContents.json()).toMatchObject({ error: { code: 400, status: "INVALID_ARGUMENT", message: expect.stringContaining("contents") } });
    const nameless = await gemini("gem-bad", { contents: [{ role: "model", parts: [{ functionCall: { args: {} } }] }] });
    expect(nameless.status).toBe(400);
    expect(await nameless.json()).toMatchObject({ error: { message: expect.stringContaining("contents[0].parts[0].functionCall") } });
  });

  it("Should answer only-if-cached on a miss with 504 DEADLINE_EXCEEDED", async () => {
    const res = await gemini("gem-none", { contents: [{ parts: [{ text: "x" }] }] }, { headers: { "cache-control": "only-if-cached" } });
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: { code: 504, status: "DEADLINE_EXCEEDED" } });
  });

  it("Should relay an upstream error as it is, and record nothing", async () => {
    const body = { contents: [{ parts: [{ text: "x" }] }] };
    const res = await gemini("error-503", body);
    expect(res.status).toBe(503);
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(await res.json()).toMatchObject({ error: { code: 503, message: "scripted 503" } });
    expect((await gemini("error-503", body, { headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
  });
});
