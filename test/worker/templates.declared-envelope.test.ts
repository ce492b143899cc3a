import { describe, expect, it } from "vitest";
import { chat, recorded, uniqueModel } from "./helpers";
import { completion, withUpstream } from "./upstream-stub";

/**
 * A declared answer is stored with placeholders and served for every binding, so what it keeps
 * outside its hash (the chat envelope, src/core/envelope.ts) must not carry the values it was recorded
 * with. An upstream that echoes the prompt (Together's `prompt` with `echo`) or decodes it (vLLM's
 * `prompt_logprobs`) sends the bound values around the message.
 */

type Fields = Record<string, unknown>;

const turn = (model: string, orderId: string) => ({ model, echo: true, messages: [{ role: "user", content: `Where is order ${orderId}?` }] });
const declare = (orderId: string) => ({ headers: { "muscle-mem-bindings": JSON.stringify({ order_id: orderId }) } });

/** The upstream's answer: the order copied into the message, the prompt echoed and decoded around it. */
function answer(body: Fields) {
  const prompt = (body.messages as Array<{ content: string }>)[0].content;
  const order = /order (\S+)\?/.exec(prompt)?.[1] ?? "";
  const [letter, digits] = order.split("-");
  return {
    json: {
      ...(completion({ role: "assistant", content: `Order ${order} shipped.` }) as Fields),
      service_tier: "default",
      prompt: [{ text: prompt, logprobs: null }],
      prompt_logprobs: [null, { "9": { decoded_token: ` ${letter}`, logprob: -1 } }, { "10": { decoded_token: `-${digits}`, logprob: -2 } }],
    },
  };
}

describe("the envelope of a declared answer", () => {
  it("Should never serve another binding's values around a declared hit's message", async () => {
    const model = uniqueModel("declared-env");
    await withUpstream(answer, async () => {
      for (const order of ["A-1001", "B-7272"]) {
        const res = await chat(turn(model, order), declare(order));
        expect(res.headers.get("muscle-mem-cache")).toBe("miss");
        await res.arrayBuffer();
        await recorded(turn(model, order), declare(order));
      }
    });
    const hit = await chat(turn(model, "D-4040"), declare("D-4040"));
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    expect(hit.headers.get("muscle-mem-template")).toBe("declared");
    const text = await hit.text();
    const json = JSON.parse(text) as Fields & { choices: Array<{ message: { content: string } }> };
    expect(json.choices[0].message.content).toBe("Order D-4040 shipped.");
    expect(text).not.toContain("A-1001");
    expect(text).not.toContain("1001");
    // A field that carries no bound value is still served.
    expect(json.service_tier).toBe("default");
  });
});
