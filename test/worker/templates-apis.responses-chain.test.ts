import { describe, expect, it } from "vitest";
import { UNCHAINABLE_TEMPLATE } from "../../src/providers/responses/key";
import { newKey } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { APIS, FOURTH, ORDERS, responsesAsk, upstreamCalls } from "./templates-apis.support";

/**
 * A learned template's answer on Responses has no stored node, so its response id cannot be resolved when the
 * client chains on it (`previous_response_id`): the next request would reach the upstream with an id it never
 * issued. Templates therefore serve Responses only with `store: false`, where the client keeps the
 * conversation itself (Codex); without it the request goes to the model and the miss says why.
 */
describe("learned templates on Responses and response chaining", () => {
  it("Should serve the fourth order from a template with store: false, and send it to the model without store, saying why", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-chain");
    await settled(async () => {
      for (const [order, email] of ORDERS) expect((await APIS.responses.send(key, model, order, email)).headers.get("muscle-mem-cache")).toBe("miss");
    });
    await learningRan();
    // Without store (the API's default keeps the response upstream for chaining): no template's answer.
    const chained = await settled(async () => {
      const res = await responsesAsk(key, model, FOURTH[0], FOURTH[1], {}, {});
      return { cache: res.headers.get("muscle-mem-cache"), reason: res.headers.get("muscle-mem-template-miss"), call: APIS.responses.call(await res.json()) };
    });
    expect(chained).toEqual({ cache: "miss", reason: UNCHAINABLE_TEMPLATE, call: { name: "get_order", args: { order_id: FOURTH[0], email: FOURTH[1] } } });
    expect(upstreamCalls()).toBe(4);
    // The same order with store: false is served from the template (polled: learning lands in the learner's alarm).
    let served: { cache: string | null; template: string | null; call: unknown } = { cache: null, template: null, call: null };
    await eventually(async () => {
      const res = await responsesAsk(key, model, "E-5005", "eve@example.com", {}, { store: false });
      served = { cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template"), call: APIS.responses.call(await res.json()) };
      return served.cache === "hit";
    }, 10_000);
    expect(served.template).toMatch(/^[0-9a-f]{32}$/);
    expect(served.call).toEqual({ name: "get_order", args: { order_id: "E-5005", email: "eve@example.com" } });
  });
});
