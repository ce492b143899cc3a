import { env, exports } from "cloudflare:workers";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { chat, recorded } from "./helpers";
import { tenantOf } from "../../src/core/hash";

export const ADMIN = "test-admin-token";

/** Calls the trajectory API through the Worker with a bearer token (or none). */
export function api(path: string, init: { token?: string | null; method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? ADMIN}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
    headers["content-type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(`http://mm.test/api${path}`, { method: init.method ?? "GET", headers, body }));
}

/**
 * `POST /api/import` into the tenant of `key`, as the operator seeds it: with the admin token and
 * `?tenant=` (a key's own import needs a grant in IMPORT_TENANTS: test/worker/access.test.ts).
 */
export function importFor(key: string, init: { body: unknown; headers?: Record<string, string> }): Promise<Response> {
  return api(`/import?tenant=${tenantOf(`Bearer ${key}`)}`, { method: "POST", body: init.body, headers: init.headers });
}

/** JSON of a response that must be 2xx. */
export async function ok<T>(res: Response | Promise<Response>): Promise<T> {
  const r = await res;
  if (!r.ok) throw new Error(`${r.status}: ${await r.text()}`);
  return (await r.json()) as T;
}

/** A fresh tenant key. */
export function newKey(): string {
  return `sk-${crypto.randomUUID()}`;
}

/** The API's response shapes, as the routes produce them. */
import type { NodeSummary, TreeSummary as Tree } from "../../src/store/tree/tree-list";

export type { NodeSummary, Tree };

/** The refund-desk conversation of one order, as its requests grow. */
export function refundTurns(model: string, order = "A-1") {
  const user = { role: "user", content: `Refund order #${order} please` };
  const first = { model, tools: REFUND_TOOLS, messages: [user] };
  return { user, first };
}

/** Records one miss for `body` under `key` and waits until it is served. */
export async function learn(body: unknown, key: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await chat(body, { key, headers });
  await res.arrayBuffer();
  if (res.headers.get("muscle-mem-cache") !== "miss") throw new Error(`expected a miss, got ${res.headers.get("muscle-mem-cache")}`);
  await recorded(body, { key, headers });
}

/** Nodes really stored for a tree, read straight from D1. */
export async function storedCount(treeId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM nodes WHERE tree_id = ?1").bind(treeId).first<{ n: number }>();
  return row?.n ?? 0;
}

/** The one tree of a tenant key (the test made exactly one). */
export async function onlyTree(key: string): Promise<Tree> {
  const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
  if (page.data.length !== 1) throw new Error(`expected one tree, got ${page.data.length}`);
  return page.data[0];
}
