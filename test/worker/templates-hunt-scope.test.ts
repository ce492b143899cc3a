import { describe, expect, it } from "vitest";
import { runCase, type Chat } from "../../tools/eval-workflows/run";
import { refundMail } from "../../tools/eval-workflows/refund-mail";
import { seeded } from "../../tools/eval-workflows/types";
import { learningRan, settled } from "./settled";
import { chatAsSent } from "./helpers";

const chatVia: Chat = chatAsSent;

const extraTool = { type: "function", function: { name: "audit_log", parameters: { type: "object", properties: { note: { type: "string" } } } } };

describe("learned templates serve only the tenant, model and tools list that taught them", () => {
  it("Should serve another credential, another model or another tools list nothing the first one's templates learned", { timeout: 120_000 }, async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const rng = seeded(11);
    const model = `wf-rmail-scope-${tag}`;
    const a = { authorization: `Bearer sk-scope-a-${tag}` };
    const warm = Array.from({ length: 10 }, () => refundMail.makeCase(rng, "Delivered"));
    const fresh = Array.from({ length: 2 }, () => refundMail.makeCase(rng, "Delivered"));
    await settled(async () => {
      for (const c of warm) expect((await runCase(refundMail, c, chatVia, { model, headers: a, declare: false })).mismatches).toEqual([]);
    });
    await learningRan();
    const others = [
      { wf: refundMail, opts: { model, headers: { authorization: `Bearer sk-scope-b-${tag}` }, declare: false } },
      { wf: refundMail, opts: { model: `${model}-other`, headers: a, declare: false } },
      { wf: { ...refundMail, tools: [...refundMail.tools, extraTool] }, opts: { model, headers: a, declare: false } },
    ];
    for (const { wf, opts } of others) {
      // Two runs each: fewer than TEMPLATE_MIN_BINDINGS, so none of them learns a template of its own.
      for (const c of fresh) {
        const result = await runCase(wf, c, chatVia, opts);
        expect(result.mismatches).toEqual([]);
        expect({ opts, served: result.served.learned + result.served.exact + result.served.declared }).toEqual({ opts, served: 0 });
      }
    }
    // The same new runs under the credential, model and tools that taught the templates: served (the test can fail).
    let learned = 0;
    for (const c of fresh) {
      const result = await runCase(refundMail, c, chatVia, { model, headers: a, declare: false });
      expect(result.mismatches).toEqual([]);
      learned += result.served.learned;
    }
    expect(learned).toBeGreaterThan(0);
  });
});
