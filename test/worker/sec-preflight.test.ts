import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

/** A browser SDK's CORS preflight, as Chromium sends it before a JSON POST with an API key. */
function preflight(path: string): Promise<Response> {
  return exports.default.fetch(
    new Request(`http://mm.test${path}`, {
      method: "OPTIONS",
      headers: {
        origin: "https://page.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,x-api-key,anthropic-version",
      },
    }),
  );
}

describe("OPTIONS on the model routes: the Worker answers, the same on every route", () => {
  it("Should answer a preflight on each API's cached route with 204 and Allow, grant no origin and forward nothing", async () => {
    const cases: Array<[path: string, allow: string]> = [
      ["/v1/chat/completions", "POST, OPTIONS"],
      ["/v1/messages", "POST, OPTIONS"],
      ["/v1/responses", "GET, HEAD, POST, DELETE, OPTIONS"],
      ["/v1beta/models/gemini-2.5-flash:generateContent", "GET, HEAD, POST, DELETE, OPTIONS"],
      ["/v1/models", "GET, HEAD, POST, DELETE, OPTIONS"],
    ];
    for (const [path, allow] of cases) {
      const res = await preflight(path);
      expect([path, res.status, res.headers.get("allow")]).toEqual([path, 204, allow]);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      // Answered by the Worker: never relayed (a relayed call is marked bypass) and no body.
      expect(res.headers.get("muscle-mem-cache")).toBeNull();
      expect(await res.text()).toBe("");
    }
  });
});
