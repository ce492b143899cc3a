import { describe, expect, it } from "vitest";
import { newApp } from "../../src/http/app";

/**
 * The app with no env at all: building the request's services throws a TypeError before any route runs, the
 * one way to reach the app's last-resort error handler from outside. Its answer must still be the route's own
 * API's envelope, and name nothing internal.
 */
async function broken(path: string, headers: Record<string, string>): Promise<Response> {
  return newApp().fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" }),
    undefined,
  );
}

describe("an unexpected failure answers in the route's own error envelope", () => {
  it("Should answer a Gemini route's 500 in Gemini's envelope and an Anthropic route's in Anthropic's", async () => {
    const gemini = await broken("/v1beta/models/gemini-2.5-flash:generateContent", { "x-goog-api-key": "g" });
    expect(gemini.status).toBe(500);
    const g = await gemini.text();
    expect(JSON.parse(g)).toMatchObject({ error: { code: 500, status: "INTERNAL" } });
    const anthropic = await broken("/v1/messages", { "x-api-key": "a", "anthropic-version": "2023-06-01" });
    expect(anthropic.status).toBe(500);
    const a = await anthropic.text();
    expect(JSON.parse(a)).toMatchObject({ type: "error", error: { type: "api_error" } });
    for (const text of [g, a]) expect(text).not.toMatch(/TypeError|undefined|at |\.ts/);
  });

  it("Should keep OpenAI's envelope on chat and the API", async () => {
    for (const path of ["/v1/chat/completions", "/api/prune"]) {
      const res = await broken(path, { authorization: "Bearer sk-x" });
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ error: { code: "internal_error", type: "server_error" } });
    }
  });
});
