import { describe, expect, it } from "vitest";
import { api, newKey, importFor } from "./api-helpers";

const HEX = "0123456789abcdef0123456789abcdef";

async function expectError(res: Promise<Response>, status: number, code: string, param?: string): Promise<void> {
  const r = await res;
  expect(r.status).toBe(status);
  const body = (await r.json()) as { error: { message: string; type: string; code: string; param: string | null } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  if (param !== undefined) expect(body.error.param).toBe(param);
}

describe("trajectory API: bad ids and bad parameters are 4xx in the error envelope", () => {
  it("Should answer 400 for malformed ids and 404 for unknown well-formed ones", async () => {
    await expectError(api("/trees/not-a-hash"), 400, "invalid_request", "treeId");
    await expectError(api("/nodes/XYZ"), 400, "invalid_request", "hash");
    await expectError(api("/nodes/XYZ/path"), 400, "invalid_request", "hash");
    await expectError(api(`/trees/${HEX}`), 404, "not_found");
    await expectError(api(`/trees/${HEX}/children`), 404, "not_found");
    await expectError(api(`/trees/${HEX}/export`), 404, "not_found");
    await expectError(api(`/nodes/${HEX}`), 404, "not_found");
    await expectError(api(`/nodes/${HEX}/path`), 404, "not_found");
    await expectError(api(`/nodes/${HEX}`, { method: "DELETE" }), 404, "not_found");
    await expectError(api("/no-such-route"), 404, "not_found");
  });

  it("Should reject bad query parameters and cursors with 400", async () => {
    await expectError(api("/trees?limit=0"), 400, "invalid_request", "limit");
    await expectError(api("/trees?limit=abc"), 400, "invalid_request", "limit");
    await expectError(api("/trees?limit=100000"), 400, "invalid_request", "limit");
    await expectError(api("/trees?cursor=garbage"), 400, "invalid_request", "cursor");
    await expectError(api("/trees?namespace=a%20b"), 400, "invalid_request", "namespace");
    await expectError(api(`/trees/${HEX}/children?parent=nope`), 400, "invalid_request", "parent");
    await expectError(api("/stats?tree_id=zz"), 400, "invalid_request", "tree_id");
  });

  it("Should reject bad prune bodies with 400", async () => {
    await expectError(api("/prune", { method: "POST", body: "{" }), 400, "invalid_json");
    await expectError(api("/prune", { method: "POST", body: {} }), 400, "invalid_request", "older_than_ms");
    await expectError(api("/prune", { method: "POST", body: { older_than_ms: -1 } }), 400, "invalid_request", "older_than_ms");
    await expectError(api("/prune", { method: "POST", body: { min_hits: "3" } }), 400, "invalid_request", "min_hits");
    await expectError(api("/prune", { method: "POST", body: { min_hits: 1, surprise: true } }), 400, "invalid_request");
    await expectError(api("/prune", { method: "POST", body: { min_hits: 1, tree_id: HEX } }), 404, "not_found");
  });

  it("Should reject bad imports with 4xx before writing anything", async () => {
    const key = newKey();
    const good = JSON.stringify({
      model: "m-import-err",
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
      ],
    });
    await expectError(importFor(key, { body: "" }), 400, "invalid_request", "body");
    await expectError(importFor(key, { body: `${good}\n{not json` }), 400, "invalid_json", "line 2");
    await expectError(importFor(key, { body: `${good}\n{"model":"m","messages":[]}` }), 400, "invalid_request");
    const orphanTool = JSON.stringify({
      model: "m",
      messages: [
        { role: "user", content: "a" },
        { role: "tool", tool_call_id: "x", content: "r" },
      ],
    });
    await expectError(importFor(key, { body: orphanTool }), 400, "invalid_request", "line 1");
    await expectError(importFor(key, { body: good, headers: { "muscle-mem-namespace": "bad space" } }), 400, "invalid_request", "muscle-mem-namespace");
    await expectError(api("/import", { method: "POST", body: good }), 400, "invalid_request", "tenant");
    const trees = (await (await api("/trees", { token: key })).json()) as { data: unknown[] };
    expect(trees.data).toEqual([]);
  });

  it("Should answer a JSON 405 with Allow for unsupported methods on API paths (test/worker/sec-methods.test.ts)", async () => {
    const res = await api("/trees", { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
  });
});
