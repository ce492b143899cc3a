import { env } from "cloudflare:workers";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { chat, eventually, generations, uniqueModel } from "./helpers";

/**
 * A declared answer is stored with placeholders and served to every other binding once two confirmed it. What the
 * model sent outside the texts a placeholder goes in (`reasoning_content`, annotations) is served as recorded: a
 * bound value there must keep the answer out of the declared tree, or the first customer's name is served to the next.
 */
const turn = (model: string, order: string, customer: string) => ({
  model,
  tools: REFUND_TOOLS,
  messages: [{ role: "user", content: `Please refund order #${order} for customer ${customer}.` }],
});
const declare = (order: string, customer: string) => ({ headers: { "muscle-mem-bindings": JSON.stringify({ order_id: order, customer }) } });

async function ask(model: string, order: string, customer: string) {
  const res = await chat(turn(model, order, customer), declare(order, customer));
  const message = ((await res.json()) as OpenAI.ChatCompletion).choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  const call = message.tool_calls?.[0];
  return {
    cache: res.headers.get("muscle-mem-cache"),
    call: call?.type === "function" ? call.function.arguments : "",
    reasoning: message.reasoning_content,
  };
}

/**
 * The declared evidence rows of the model's declared trees: one per binding the model answered (stored or not:
 * src/store/templates/declared.ts). A declared tree that never stored an answer has no `trees` row, so the rows
 * counted are those of no other model's tree.
 */
async function evidenceRows(model: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM templates WHERE anchor_depth = -1 AND tree_id NOT IN (SELECT id FROM trees WHERE model != ?1)")
    .bind(model)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("declared variables and the fields a placeholder does not go in", () => {
  it("Should never serve one customer's name in another's reasoning_content (two bindings that share the name confirm nothing)", async () => {
    const model = uniqueModel("reasoning-decl");
    expect(await ask(model, "A-1001", "Adalyn")).toMatchObject({ cache: "miss", call: '{"order_id":"A-1001"}' });
    // A second binding (the same customer, another order) goes to the model, as one binding never confirms an answer.
    expect(await ask(model, "A-1002", "Adalyn")).toMatchObject({ cache: "miss", reasoning: "The customer is Adalyn; looking at the order first." });
    // Both answers are noted at the node before the third binding asks (with the answer stored, or as one that could not be).
    await eventually(async () => (await evidenceRows(model)) === 2);
    const third = await ask(model, "A-1003", "Brunhilde");
    expect(third).toMatchObject({ cache: "miss", call: '{"order_id":"A-1003"}', reasoning: "The customer is Brunhilde; looking at the order first." });
    expect(await generations(model)).toBe(3);
  });

  it("Should still serve a declared answer whose reasoning_content holds no bound value", async () => {
    const model = uniqueModel("reasoning-decl");
    // The customer is not a declared variable here: the reasoning names the same customer for every order.
    const only = (order: string) => ({ headers: { "muscle-mem-bindings": JSON.stringify({ order_id: order }) } });
    const send = async (order: string) => {
      const res = await chat(turn(model, order, "Adalyn"), only(order));
      const message = ((await res.json()) as OpenAI.ChatCompletion).choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
      return { cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template"), reasoning: message.reasoning_content };
    };
    expect((await send("A-1001")).cache).toBe("miss");
    await eventually(async () => {
      const res = await chat(turn(model, "A-1001", "Adalyn"), { headers: { ...only("A-1001").headers, "cache-control": "only-if-cached" } });
      await res.arrayBuffer();
      return res.status === 200;
    });
    expect((await send("A-1002")).cache).toBe("miss");
    await eventually(async () => {
      const res = await chat(turn(model, "A-1003", "Adalyn"), { headers: { ...only("A-1003").headers, "cache-control": "only-if-cached" } });
      await res.arrayBuffer();
      return res.status === 200;
    });
    expect(await send("A-1003")).toEqual({ cache: "hit", template: "declared", reasoning: "The customer is Adalyn; looking at the order first." });
    expect(await generations(model)).toBe(2);
  });
});
