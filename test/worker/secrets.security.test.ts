import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TreeWriter } from "../../src/store/objects/tree-writer";
import { api } from "./api-helpers";
import { chat, recorded, uniqueModel } from "./helpers";

const SECRET = `sk-secret-${crypto.randomUUID()}`;
const ANTHROPIC_SECRET = `sk-ant-secret-${crypto.randomUUID()}`;

/** Everything D1 holds, every table and column, as one string. */
async function dumpD1(): Promise<string> {
  const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all<{
    name: string;
  }>();
  const parts: string[] = [];
  for (const { name } of tables.results) {
    const rows = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
    parts.push(name, JSON.stringify(rows.results));
  }
  return parts.join("\n");
}

/** Everything the tree writers' Durable Object storage holds (SQLite tables and KV). */
async function dumpObjects(): Promise<string> {
  const trees = await env.DB.prepare("SELECT id FROM trees").all<{ id: string }>();
  const parts: string[] = [];
  for (const { id } of trees.results) {
    const stub = env.TREE_WRITER.get(env.TREE_WRITER.idFromName(id));
    parts.push(
      await runInDurableObject(stub as DurableObjectStub<TreeWriter>, async (_instance, state) => {
        const out: string[] = [];
        const tables = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray() as Array<{ name: string }>;
        for (const { name } of tables) {
          try {
            out.push(name, JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${name}"`).toArray()));
          } catch {
            out.push(name, "(not readable)");
          }
        }
        out.push(JSON.stringify([...(await state.storage.list()).entries()]));
        return out.join("\n");
      }),
    );
  }
  return parts.join("\n");
}

afterEach(() => vi.restoreAllMocks());

describe("raw upstream keys", () => {
  it("Should never appear in D1, in Durable Object storage or in logs, after hits, misses, errors, bad input and API calls", { timeout: 30_000 }, async () => {
    // Spies that call through: every line the Worker logs is also recorded here.
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) => vi.spyOn(console, level));
    const logged = () => spies.flatMap((spy) => spy.mock.calls.map((args) => args.map(String).join(" ")));
    const model = uniqueModel("echo");
    const body = { model, messages: [{ role: "user", content: "keep my key safe" }] };
    const first = await chat(body, { key: SECRET });
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.arrayBuffer();
    await recorded(body, { key: SECRET });
    await (await chat({ ...body, stream: true }, { key: SECRET })).arrayBuffer();
    await (await chat({ model: uniqueModel("error-500"), messages: [{ role: "user", content: "x" }] }, { key: SECRET })).arrayBuffer();
    await (await chat("{not json", { key: SECRET })).arrayBuffer();
    await (await chat(body, { key: SECRET, headers: { "muscle-mem-namespace": "bad ns" } })).arrayBuffer();
    await (await api("/trees", { token: SECRET })).arrayBuffer();
    await (await api("/stats", { token: SECRET })).arrayBuffer();
    await (await api("/trees", { token: "test-admin-token" })).arrayBuffer();
    const anthropic = await fetchMessages(ANTHROPIC_SECRET);
    expect(anthropic).toBeLessThan(500);

    const d1 = await dumpD1();
    expect(d1).toContain(model); // the dump is real: it holds this test's tree
    const objects = await dumpObjects();
    for (const secret of [SECRET, ANTHROPIC_SECRET, "test-admin-token"]) {
      expect(d1).not.toContain(secret);
      expect(objects).not.toContain(secret);
      expect(logged().join("\n")).not.toContain(secret);
    }
    expect(logged().length).toBeGreaterThan(0); // logging was captured, so its silence about keys means something
  });
});

async function fetchMessages(key: string): Promise<number> {
  const { exports } = await import("cloudflare:workers");
  const res = await exports.default.fetch(
    new Request("http://mm.test/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: uniqueModel("echo"), max_tokens: 16, messages: [{ role: "user", content: "hello" }] }),
    }),
  );
  await res.arrayBuffer();
  return res.status;
}
