import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for the Worker's trajectory API (docs/api.md) with just the routes
 * the RemoteStore uses: GET /api/whoami, POST /api/import (the admin names
 * the tenant), GET /api/trees (tenant and namespace filters), GET /api/trees/:id
 * and GET /api/trees/:id/export. Trees are real path-hash tries, so a branch that
 * shares leading messages with another path shares their nodes.
 */
export const ADMIN_TOKEN = "dev-admin-token";

type Message = Record<string, unknown>;
interface Node {
  hash: string;
  parent: string;
  treeId: string;
  message: Message;
}
interface Tree {
  id: string;
  tenant: string;
  namespace: string;
  model: string;
  tools: unknown;
  createdAt: number;
}

const h = (...parts: string[]) => createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 32);

function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(",")}}`;
}

/** Tool-call ids become ordinals, and arguments are re-serialised with sorted keys, as in DESIGN.md. */
function canonicalMessage(m: Message, ordinal: Map<string, string>): string {
  const copy: Message = { ...m };
  if (Array.isArray(m.tool_calls)) {
    copy.tool_calls = (m.tool_calls as Message[]).map((c) => {
      const id = String(c.id);
      if (!ordinal.has(id)) ordinal.set(id, `call_${ordinal.size}`);
      const fn = c.function as Message;
      return { ...c, id: ordinal.get(id), function: { ...fn, arguments: canonical(JSON.parse(String(fn.arguments))) } };
    });
  }
  if (typeof m.tool_call_id === "string") copy.tool_call_id = ordinal.get(m.tool_call_id) ?? m.tool_call_id;
  return canonical(copy);
}

export class FakeWorker {
  readonly trees = new Map<string, Tree>();
  readonly nodes = new Map<string, Node>();
  readonly requests: { method: string; url: string; authorization?: string; namespace?: string }[] = [];
  /** The most trees one page of GET /api/trees returns, to exercise cursors. */
  pageSize = 2;
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req).then(
        ({ status, body, type }) => res.writeHead(status, { "content-type": type }).end(body),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  nodesIn(treeId: string): number {
    return [...this.nodes.values()].filter((n) => n.treeId === treeId).length;
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: string; type: string }> {
    const url = new URL(req.url ?? "/", "http://x");
    const authorization = req.headers.authorization;
    const namespaceHeader = req.headers["muscle-mem-namespace"] as string | undefined;
    this.requests.push({ method: req.method ?? "", url: url.pathname + url.search, authorization, namespace: namespaceHeader });
    const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body), type: "application/json" });
    const token = authorization?.match(/^Bearer (.+)$/)?.[1];
    if (!token) return json(401, { error: { message: "missing bearer token", type: "invalid_request_error", code: "unauthorized" } });
    const tenant = token === ADMIN_TOKEN ? "admin" : h("tenant", token);
    const visible = (t: Tree) => token === ADMIN_TOKEN || t.tenant === tenant;

    if (req.method === "GET" && url.pathname === "/api/whoami") {
      return json(200, token === ADMIN_TOKEN ? { role: "admin" } : { role: "tenant", tenant });
    }

    if (req.method === "POST" && url.pathname === "/api/import") {
      const named = url.searchParams.get("tenant");
      if (token === ADMIN_TOKEN && !named)
        return json(400, {
          error: { message: "The admin token must name the tenant to seed: ?tenant=<tenant id>.", type: "invalid_request_error", code: "invalid_request" },
        });
      const into = token === ADMIN_TOKEN ? (named as string) : tenant;
      let body = "";
      for await (const chunk of req) body += String(chunk);
      let nodesInserted = 0;
      const trees = new Set<string>();
      const lines = body.split("\n").filter((l) => l.trim());
      for (const line of lines) {
        const { model, tools, messages } = JSON.parse(line) as { model: string; tools: unknown; messages: Message[] };
        const namespace = namespaceHeader ?? "default";
        const treeId = h("tree", into, namespace, model, canonical(tools ?? null));
        if (!this.trees.has(treeId)) this.trees.set(treeId, { id: treeId, tenant: into, namespace, model, tools, createdAt: Date.now() });
        trees.add(treeId);
        let parent = treeId;
        const ordinal = new Map<string, string>();
        for (const message of messages) {
          const hash = h(parent, canonicalMessage(message, ordinal));
          if (!this.nodes.has(hash)) {
            this.nodes.set(hash, { hash, parent, treeId, message });
            nodesInserted++;
          }
          parent = hash;
        }
      }
      return json(200, { lines: lines.length, trees: trees.size, nodes_inserted: nodesInserted, answers: lines.length });
    }

    if (req.method === "GET" && url.pathname === "/api/trees") {
      const namespace = url.searchParams.get("namespace");
      const only = url.searchParams.get("tenant");
      const all = [...this.trees.values()].filter((t) => visible(t) && (!namespace || t.namespace === namespace) && (!only || t.tenant === only));
      const offset = Number(url.searchParams.get("cursor") || 0);
      const limit = Math.min(Number(url.searchParams.get("limit") || 50), this.pageSize);
      const page = all
        .slice(offset, offset + limit)
        .map((t) => ({ id: t.id, tenant: t.tenant, namespace: t.namespace, model: t.model, tools: [], node_count: this.nodesIn(t.id) }));
      return json(200, { data: page, next_cursor: offset + limit < all.length ? String(offset + limit) : null });
    }

    const treeMatch = url.pathname.match(/^\/api\/trees\/([^/]+)$/);
    if (req.method === "GET" && treeMatch) {
      const tree = this.trees.get(decodeURIComponent(treeMatch[1]));
      if (!tree || !visible(tree)) return json(404, { error: { message: "tree not found", type: "not_found", code: "not_found" } });
      return json(200, { id: tree.id, tenant: tree.tenant, namespace: tree.namespace, model: tree.model, node_count: this.nodesIn(tree.id) });
    }

    const exportMatch = url.pathname.match(/^\/api\/trees\/([^/]+)\/export$/);
    if (req.method === "GET" && exportMatch) {
      const tree = this.trees.get(decodeURIComponent(exportMatch[1]));
      if (!tree || !visible(tree)) return json(404, { error: { message: "tree not found", type: "not_found", code: "not_found" } });
      const nodes = [...this.nodes.values()].filter((n) => n.treeId === tree.id);
      const parents = new Set(nodes.map((n) => n.parent));
      const lines = nodes
        .filter((n) => !parents.has(n.hash))
        .map((leaf) => {
          const path: Message[] = [];
          for (let n: Node | undefined = leaf; n; n = this.nodes.get(n.parent)) path.unshift(n.message);
          // Fresh tool-call ids, as the real export emits: clients must not rely on the ids they sent.
          const fresh = JSON.stringify(path).replace(/"call_(\d+)"/g, `"call_${leaf.hash.slice(0, 6)}_$1"`);
          return JSON.stringify({ id: leaf.hash, model: tree.model, tools: tree.tools, messages: JSON.parse(fresh) });
        });
      return { status: 200, body: lines.join("\n") + "\n", type: "application/x-ndjson" };
    }
    return json(404, { error: { message: "no such route", type: "not_found", code: "not_found" } });
  }
}
