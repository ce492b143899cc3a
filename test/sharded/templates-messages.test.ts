import { describe, expect, it } from "vitest";
import { dbNamed, homeOf, NAMES } from "./shard-helpers";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { api, learn, ok, type Tree } from "../worker/api-helpers";
import { chat, eventually } from "../worker/helpers";
import { messageRecorded, postMessages } from "../worker/messages.support";

async function count(name: string, sql: string, bind: string): Promise<number> {
  return (await dbNamed(name).prepare(sql).bind(bind).first<{ n: number }>())?.n ?? 0;
}

const ask = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });

describe("learned templates and the Messages API over four shards", () => {
  it("Should learn, serve and count a template in the tree's own shard, never the default one", async () => {
    // Fixed names make the tree id, and so its shard, deterministic: take the first namespace whose tree is not on DB.
    const key = "sk-sharded-templates";
    const model = "sharded-refunds";
    let tree: Tree | undefined;
    let headers: Record<string, string> = {};
    for (let i = 0; i < 12 && !tree; i++) {
      headers = { "muscle-mem-namespace": `templates-${i}` };
      await learn(ask(model, "A-1"), key, headers);
      const page = await ok<{ data: Tree[] }>(api(`/trees?namespace=templates-${i}`, { token: key }));
      if ((await homeOf(page.data[0].id)) !== "DB") tree = page.data[0];
    }
    if (!tree) throw new Error("no namespace landed off the default shard");
    const home = (await homeOf(tree.id)) ?? "";
    for (const order of ["B-22", "C-333"]) await learn(ask(model, order), key, headers);
    await eventually(async () => (await count(home, "SELECT count(*) AS n FROM templates WHERE tree_id = ?1", tree.id)) > 0);
    for (const other of NAMES.filter((n) => n !== home)) {
      expect(await count(other, "SELECT count(*) AS n FROM templates WHERE tree_id = ?1", tree.id)).toBe(0);
    }
    let served: Response | undefined;
    await eventually(async () => {
      const res = await chat(ask(model, "D-4444"), { key, headers: { ...headers, "cache-control": "only-if-cached" } });
      await res.arrayBuffer();
      served = res;
      return res.status === 200;
    });
    const template = served?.headers.get("muscle-mem-template") ?? "";
    expect(template).toMatch(/^[0-9a-f]{32}$/);
    await eventually(async () => (await count(home, "SELECT hits AS n FROM templates WHERE id = ?1", template)) >= 1);
  });

  it("Should record and serve an Anthropic Messages conversation from its shard", async () => {
    const body = { model: "claude-sharded", max_tokens: 64, messages: [{ role: "user", content: "Refund order #M-1 please" }] };
    const key = "sk-ant-sharded";
    const first = await postMessages(body, { key });
    await first.arrayBuffer();
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await messageRecorded(body, { key });
    const again = await postMessages(body, { key });
    await again.arrayBuffer();
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(page.data).toHaveLength(1);
    const id = page.data[0].id;
    for (const name of NAMES) {
      const home = await homeOf(id);
      expect((await count(name, "SELECT count(*) AS n FROM nodes WHERE tree_id = ?1", id)) > 0).toBe(name === home);
    }
  });
});
