import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN } from "./api-helpers";

const admin = { authorization: `Bearer ${ADMIN}` };
const TREE = "0123456789abcdef0123456789abcdef";

function call(path: string, method: string, headers: Record<string, string> = admin): Promise<Response> {
  return exports.default.fetch(new Request(`http://mm.test${path}`, { method, headers }));
}

async function envelope(res: Response): Promise<{ code: string; type: string; message: string }> {
  return ((await res.json()) as { error: { code: string; type: string; message: string } }).error;
}

describe("wrong methods are a 405 with Allow, never a 404 or a 500", () => {
  it("Should answer each API path's other methods with 405, its Allow listing what it answers", async () => {
    const cases: Array<[path: string, method: string, allow: string]> = [
      ["/api/trees", "POST", "GET, HEAD, OPTIONS"],
      ["/api/trees", "DELETE", "GET, HEAD, OPTIONS"],
      [`/api/trees/${TREE}`, "PUT", "GET, HEAD, OPTIONS"],
      [`/api/trees/${TREE}/export`, "POST", "GET, HEAD, OPTIONS"],
      [`/api/trees/${TREE}/move`, "GET", "POST, OPTIONS"],
      ["/api/import", "GET", "POST, OPTIONS"],
      ["/api/prune", "GET", "POST, OPTIONS"],
      ["/api/stats", "POST", "GET, HEAD, OPTIONS"],
      [`/api/nodes/${TREE}`, "PATCH", "GET, HEAD, DELETE, OPTIONS"],
      ["/api/requests/some-id", "DELETE", "GET, HEAD, OPTIONS"],
    ];
    for (const [path, method, allow] of cases) {
      const res = await call(path, method);
      expect([path, method, res.status]).toEqual([path, method, 405]);
      expect(res.headers.get("allow")).toBe(allow);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await envelope(res)).toMatchObject({ code: "method_not_allowed", type: "invalid_request_error" });
    }
  });

  it("Should answer the 405 before authentication, and keep unknown paths a 404 behind it", async () => {
    const res = await call("/api/import", "GET", {});
    expect(res.status).toBe(405);
    expect((await call("/api/no-such-route", "GET", {})).status).toBe(401);
    expect((await call("/api/no-such-route", "GET")).status).toBe(404);
  });

  it("Should answer an API OPTIONS with 204 and Allow, granting no other origin", async () => {
    const res = await call("/api/trees", "OPTIONS", { origin: "https://evil.example", "access-control-request-method": "GET" });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("Should name POST in Allow on the cached model routes' 405s, in each API's envelope", async () => {
    const chat = await call("/v1/chat/completions", "GET", { authorization: "Bearer sk-m" });
    expect(chat.status).toBe(405);
    expect(chat.headers.get("allow")).toBe("POST");
    expect(await envelope(chat)).toMatchObject({ code: "method_not_allowed" });
    const messages = await call("/v1/messages", "PUT", { "x-api-key": "ak-m", "anthropic-version": "2023-06-01" });
    expect(messages.status).toBe(405);
    expect(messages.headers.get("allow")).toBe("POST");
    expect(await messages.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  it("Should answer /healthz's other methods with 405 and Allow: GET, HEAD", async () => {
    expect((await call("/healthz", "HEAD", {})).status).toBe(200);
    const res = await call("/healthz", "POST", {});
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(await envelope(res)).toMatchObject({ code: "method_not_allowed" });
  });
});
