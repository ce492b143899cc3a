import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { callWorker, chatRequest } from "./faults.support";
import { answerNode, COLD, logsDuring } from "./fault-hunt.support";

/** Records two conversations of one tree under a fresh key: answers `echo: <a>` and `echo: <b>`, each below its user node. */
async function twoPaths(): Promise<{ key: string; tree: string; a: { answer: string; user: string }; b: { answer: string; user: string } }> {
  const key = newKey();
  const model = uniqueModel("echo");
  const texts = [`hunt-a-${crypto.randomUUID().slice(0, 8)}`, `hunt-b-${crypto.randomUUID().slice(0, 8)}`];
  const nodes = [];
  for (const text of texts) {
    const call = await callWorker(chatRequest({ model, messages: [{ role: "user", content: text }] }, { key }), COLD);
    await call.res.arrayBuffer();
    await call.settled();
    const answer = await answerNode(`echo: ${text}`);
    const row = await env.DB.prepare("SELECT parent, tree_id FROM nodes WHERE hash = ?1").bind(answer).first<{ parent: string; tree_id: string }>();
    if (!row) throw new Error("no row");
    nodes.push({ answer, user: row.parent, tree: row.tree_id });
  }
  return { key, tree: nodes[0].tree, a: nodes[0], b: nodes[1] };
}

const setMessage = (hash: string, message: string) => env.DB.prepare("UPDATE nodes SET message = ?1 WHERE hash = ?2").bind(message, hash).run();

/** The export's lines (JSONL) for a tree, as a tenant key reads them. */
async function exported(key: string, tree: string): Promise<{ status: number; ids: string[] }> {
  const res = await api(`/trees/${tree}/export`, { token: key });
  const text = new TextDecoder().decode(await res.arrayBuffer());
  if (res.status !== 200) return { status: res.status, ids: [] };
  return {
    status: 200,
    ids: text
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => (JSON.parse(l) as { id: string }).id),
  };
}

describe("the dashboard API over a damaged node", () => {
  for (const [name, message] of [
    ["not JSON", "{not json"],
    ["JSON null", "null"],
  ] as const) {
    it(`Should show the node as damaged, list it and export the tree's other paths (message ${name}), never a 500`, async () => {
      const { key, tree, a, b } = await twoPaths();
      await setMessage(a.answer, message);

      const node = await api(`/nodes/${a.answer}`, { token: key });
      expect(node.status).toBe(200);
      expect(await node.json()).toMatchObject({ hash: a.answer, damaged: true, message: null, view: { texts: [], calls: [] } });

      const path = await api(`/nodes/${a.answer}/path`, { token: key });
      expect(path.status).toBe(200);
      expect(await path.json()).toMatchObject({ tree_id: tree, messages: null, hashes: [a.user, a.answer], damaged: [a.answer] });

      const children = await api(`/trees/${tree}/children?parent=${a.user}`, { token: key });
      expect(children.status).toBe(200);
      expect(((await children.json()) as { data: Array<{ hash: string }> }).data.map((n) => n.hash)).toEqual([a.answer]);

      const subtree = await api(`/trees/${tree}/subtree`, { token: key });
      expect(subtree.status).toBe(200);
      expect(((await subtree.json()) as { data: Array<{ hash: string }> }).data.map((n) => n.hash)).toContain(a.answer);

      const { result, events } = await logsDuring(() => exported(key, tree));
      expect(result).toEqual({ status: 200, ids: [b.answer] });
      expect(events.filter((e) => e.event === "export_line_skipped").map((e) => e.leaf)).toEqual([a.answer]);
    });
  }

  it("Should leave out of the export a path whose chain does not reach the root (its answer would be imported without its conversation)", async () => {
    const { key, tree, a, b } = await twoPaths();
    await env.DB.prepare("UPDATE nodes SET parent = 'gone' WHERE hash = ?1").bind(a.user).run();
    const { result, events } = await logsDuring(() => exported(key, tree));
    expect(result).toEqual({ status: 200, ids: [b.answer] });
    expect(events.filter((e) => e.event === "export_line_skipped").map((e) => e.reason)).toEqual(["path does not reach the root"]);
  });
});

describe("the dashboard API over a tree whose stored frame is damaged", () => {
  for (const [name, frame] of [
    ["not JSON", "{bad"],
    ["JSON null", "null"],
  ] as const) {
    it(`Should list and read the tree, and refuse its export with a clear 409 (frame ${name}), never a 500`, async () => {
      const { key, tree } = await twoPaths();
      await env.DB.prepare("UPDATE trees SET frame = ?1 WHERE id = ?2").bind(frame, tree).run();

      const list = await api("/trees", { token: key });
      expect(list.status).toBe(200);
      expect(((await list.json()) as { data: Array<{ id: string; tools: unknown[] }> }).data).toMatchObject([{ id: tree, tools: [] }]);

      const one = await api(`/trees/${tree}`, { token: key });
      expect(one.status).toBe(200);
      expect(await one.json()).toMatchObject({ id: tree, frame: {}, damaged: true });

      const children = await api(`/trees/${tree}/children`, { token: key });
      expect(children.status).toBe(200);
      await children.arrayBuffer();

      // Lines without the frame would key the answers without the tools and parameters they were recorded under.
      const exported = await api(`/trees/${tree}/export`, { token: key });
      expect(exported.status).toBe(409);
      expect(await exported.json()).toMatchObject({ error: { type: "invalid_request_error", code: "conflict" } });
    });
  }
});

describe("pruning a damaged node", () => {
  it("Should preview and prune a node whose message is not JSON (the operator's way to remove it), never a 500", async () => {
    const { key, a, b } = await twoPaths();
    await setMessage(a.answer, "{not json");

    const dry = await api(`/nodes/${a.answer}/prune`, { token: key });
    expect(dry.status).toBe(200);
    expect(await dry.json()).toMatchObject({ dry_run: true, nodes: 1, answers: 1 });

    const pruned = await api(`/nodes/${a.answer}`, { token: key, method: "DELETE" });
    expect(pruned.status).toBe(200);
    expect(await pruned.json()).toMatchObject({ nodes: 1, answers: 1 });
    const left = await env.DB.prepare("SELECT hash FROM nodes WHERE hash IN (?1, ?2)").bind(a.answer, b.answer).all<{ hash: string }>();
    expect(left.results.map((r) => r.hash)).toEqual([b.answer]);
  });
});
