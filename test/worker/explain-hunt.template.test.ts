import { describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { learn, newKey } from "./api-helpers";
import { chat, uniqueModel } from "./helpers";
import { explained } from "./explain-hunt.support";
import { learningRan, settled } from "./settled";

/**
 * Why-it-missed hunt, templates (docs/api.md "Why it missed", `template`): the reason a learned template did
 * not serve reaches the header and the explanation, on a miss that went to the model and on an
 * `only-if-cached` 504 alike.
 */

const ask = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });

describe("why it missed: a template near-miss", () => {
  it("Should give the template's reason on a miss and on an only-if-cached 504, in the header and the explanation", async () => {
    const key = newKey();
    const model = uniqueModel();
    await settled(async () => {
      for (const order of ["A-1", "B-22"]) await learn(ask(model, order), key);
    });
    await learningRan();
    const reason = "not yet confirmed: 2 of 3 bindings";
    for (const [name, headers] of [
      ["cached", { "cache-control": "only-if-cached" }],
      ["model", {}],
    ] as const) {
      const id = `why-template-${name}-${model}`;
      const res = await settled(async () => {
        const r = await chat(ask(model, "C-333"), { key, headers: { "x-request-id": id, ...headers } });
        await r.arrayBuffer();
        return r;
      });
      expect(res.headers.get("muscle-mem-cache"), name).toBe("miss");
      expect(res.headers.get("muscle-mem-template-miss"), name).toBe(reason);
      const row = await explained(id, key);
      expect(row.explanation, name).toMatchObject({ kind: "new-branch", depth: 0, template: reason });
    }
  });
});
