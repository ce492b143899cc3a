import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { api } from "./api-helpers";
import { chat, recorded, uniqueModel } from "./helpers";

const HASH = "0123456789abcdef0123456789abcdef";

/** Every route of docs/api.md, with a body where it takes one. */
const ROUTES: Array<{ method: string; path: string; body?: string }> = [
  { method: "GET", path: "/trees" },
  { method: "GET", path: `/trees/${HASH}` },
  { method: "GET", path: `/trees/${HASH}/children` },
  { method: "GET", path: `/trees/${HASH}/export` },
  { method: "GET", path: `/nodes/${HASH}` },
  { method: "GET", path: `/nodes/${HASH}/path` },
  { method: "DELETE", path: `/nodes/${HASH}` },
  { method: "POST", path: "/import", body: "" },
  { method: "POST", path: "/prune", body: JSON.stringify({ dry_run: true }) },
  { method: "GET", path: "/stats" },
];

/** Authorization values that carry no usable bearer credential. */
const UNUSABLE: Array<[string, string | null]> = [
  ["no header", null],
  ["an empty header", ""],
  ["Basic auth", "Basic dGVzdC1hZG1pbi10b2tlbjo="],
  ["a bare 'Bearer'", "Bearer"],
  ["'Bearer' and spaces", "Bearer    "],
  ["another scheme", "Token test-admin-token"],
  ["the admin token without a scheme", "test-admin-token"],
];

describe("admin auth on every /api route", () => {
  for (const route of ROUTES) {
    for (const [what, authorization] of UNUSABLE) {
      it(`Should answer 401 for ${route.method} ${route.path} with ${what}`, async () => {
        const headers: Record<string, string> = authorization === null ? {} : { authorization };
        const res = await api(route.path, { token: null, method: route.method, body: route.body, headers });
        expect(res.status).toBe(401);
        const body = (await res.json()) as { error: { code: string; type: string; message: string } };
        expect(body.error.code).toBe("unauthorized");
        expect(body.error.message).not.toContain("test-admin-token");
      });
    }
  }

  it("Should give a wrong admin token (one character off, a prefix, a longer string) no admin view, on every route", async () => {
    const model = uniqueModel("echo");
    const body = { model, messages: [{ role: "user", content: "admin-only view" }] };
    await (await chat(body, { key: "sk-someone" })).arrayBuffer();
    await recorded(body, { key: "sk-someone" });
    const admin = (await (await api("/trees")).json()) as { data: Array<{ model: string }> };
    expect(admin.data.map((t) => t.model)).toContain(model);
    for (const wrong of ["test-admin-tokeN", "test-admin-toke", "test-admin-token-", " test-admin-token x"]) {
      const page = (await (await api("/trees", { token: wrong })).json()) as { data: Array<{ model: string }> };
      expect(page.data.map((t) => t.model)).not.toContain(model);
      const stats = await api("/stats", { token: wrong });
      expect(JSON.stringify(await stats.json())).not.toContain(model);
    }
  });
});

describe("the dashboard", () => {
  it("Should be served publicly as static assets that embed no data, token or tenant", async () => {
    const model = uniqueModel("echo");
    const body = { model, messages: [{ role: "user", content: "dashboard must not show this" }] };
    await (await chat(body, { key: "sk-dash" })).arrayBuffer();
    await recorded(body, { key: "sk-dash" });
    // What the asset layer serves before the Worker runs (no credential involved).
    const res = await env.ASSETS.fetch("http://mm.test/index.html");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const dashboard = await res.text();
    expect(dashboard).not.toContain(model);
    expect(dashboard).not.toContain("test-admin-token");
    expect(dashboard).not.toMatch(/[0-9a-f]{32}/);
    expect(dashboard).not.toMatch(/sk-[A-Za-z0-9]/);
  });
});
