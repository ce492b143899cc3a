import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uniqueModel } from "./helpers";
import { callWorker, chatRequest } from "./faults.support";
import { answerNode, COLD, damage, logsDuring } from "./fault-hunt.support";

const ask = (model: string, text: string, stream: boolean) => ({ model, messages: [{ role: "user", content: text }], ...(stream ? { stream: true } : {}) });

/** What a chat response says, JSON or streamed (the deltas' content joined). */
async function saidBy(res: Response, stream: boolean): Promise<unknown> {
  if (!stream) return ((await res.json()) as { choices: Array<{ message: { content: unknown } }> }).choices[0].message.content;
  const deltas = (await res.text())
    .split("\n")
    .filter((l) => l.startsWith("data: {"))
    .map((l) => (JSON.parse(l.slice(6)) as { choices: Array<{ delta: { content?: unknown } }> }).choices[0]?.delta.content);
  return deltas.filter((d) => d !== undefined && d !== "").join("");
}

/** Damaged or foreign chat answer rows: each a message column as a bad migration, a hand edit or an import could leave it. */
const DAMAGED: Array<[string, string]> = [
  ["not JSON", "{not json"],
  ["a number", "5"],
  ["null", "null"],
  ["an array", "[]"],
  ["an object with no role", '{"content":"x"}'],
  ["a user message", '{"role":"user","content":"x"}'],
  ["content parts as objects", '{"role":"assistant","content":[{"type":"text","text":"x"}]}'],
  ["content an object", '{"role":"assistant","content":{"a":1}}'],
  ["tool_calls not a list", '{"role":"assistant","content":null,"tool_calls":5}'],
  ["a tool call with no function", '{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function"}]}'],
  ["an Anthropic answer", '{"role":"assistant","content":[{"type":"tool_use","id":"toolu_0","name":"f","input":{}}]}'],
];

describe("a damaged chat answer row", () => {
  for (const stream of [false, true]) {
    for (const [name, message] of DAMAGED) {
      it(`Should answer from the model (${name}, ${stream ? "streamed" : "JSON"}), never serve the row nor answer 500`, async () => {
        const model = uniqueModel("echo");
        const text = `hunt-${crypto.randomUUID().slice(0, 8)}`;
        const first = await callWorker(chatRequest(ask(model, text, false)), COLD);
        expect(await saidBy(first.res, false)).toBe(`echo: ${text}`);
        await first.settled();
        await damage(await answerNode(`echo: ${text}`), message);

        const call = await callWorker(chatRequest(ask(model, text, stream)), COLD);
        expect(call.res.status).toBe(200);
        expect(call.res.headers.get("muscle-mem-cache")).toBe("miss");
        expect(await saidBy(call.res, stream)).toBe(`echo: ${text}`);
        await call.settled();
      });
    }
  }

  it("Should say which node it skipped when the row's message is not a JSON object", async () => {
    const model = uniqueModel("echo");
    const text = `hunt-${crypto.randomUUID().slice(0, 8)}`;
    const first = await callWorker(chatRequest(ask(model, text, false)), COLD);
    await first.res.arrayBuffer();
    await first.settled();
    const node = await answerNode(`echo: ${text}`);
    await damage(node, "{not json");
    const { events } = await logsDuring(async () => {
      const call = await callWorker(chatRequest(ask(model, text, false)), COLD);
      await call.res.arrayBuffer();
      await call.settled();
    });
    expect(events.filter((e) => e.event === "stored_answer_damaged").map((e) => e.node)).toContain(node);
  });
});

describe("a damaged chat answer row and the next recording of that answer", () => {
  for (const [name, message] of [
    ["not JSON", "{not json"],
    ["a number", "5"],
  ] as const) {
    it(`Should take the model's message again, so the node serves again (message ${name})`, async () => {
      const model = uniqueModel("echo");
      const text = `hunt-${crypto.randomUUID().slice(0, 8)}`;
      const first = await callWorker(chatRequest(ask(model, text, false)), COLD);
      await first.res.arrayBuffer();
      await first.settled();
      await damage(await answerNode(`echo: ${text}`), message);

      const second = await callWorker(chatRequest(ask(model, text, false)), COLD);
      expect(second.res.headers.get("muscle-mem-cache")).toBe("miss");
      await second.res.arrayBuffer();
      await second.settled();
      // No object remembers the recording: the next lookup reads the row from D1.
      await abortAllDurableObjects();

      const third = await callWorker(chatRequest(ask(model, text, false)), COLD);
      expect(third.res.headers.get("muscle-mem-cache")).toBe("hit");
      expect(await saidBy(third.res, false)).toBe(`echo: ${text}`);
      await third.settled();
    });
  }
});

describe("a damaged answer beside a sound one at the same node", () => {
  it("Should serve the sound answer (the damaged one, however often observed, is skipped)", async () => {
    const model = uniqueModel("echo");
    const text = `hunt-${crypto.randomUUID().slice(0, 8)}`;
    const first = await callWorker(chatRequest(ask(model, text, false)), COLD);
    await first.res.arrayBuffer();
    await first.settled();
    const sound = await answerNode(`echo: ${text}`);
    const row = await env.DB.prepare("SELECT parent, tree_id FROM nodes WHERE hash = ?1").bind(sound).first<{ parent: string; tree_id: string }>();
    if (!row) throw new Error("no row");
    await env.DB.prepare(
      "INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations, finish_reason) VALUES (?1, ?2, ?3, 2, 'assistant', '{not json', 1000, 'stop')",
    )
      .bind(`damaged-${crypto.randomUUID().replaceAll("-", "")}`, row.parent, row.tree_id)
      .run();
    await abortAllDurableObjects();

    const call = await callWorker(chatRequest(ask(model, text, false)), COLD);
    expect(call.res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(call.res.headers.get("muscle-mem-node")).toBe(sound);
    expect(await saidBy(call.res, false)).toBe(`echo: ${text}`);
    await call.settled();
  });
});
