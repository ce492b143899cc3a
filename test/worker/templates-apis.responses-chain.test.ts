import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UNKEPT_TEMPLATE } from "../../src/engine/served-answer";
import { parseServedResponseId } from "../../src/providers/responses/previous";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { APIS, FOURTH, ORDERS, SYSTEM, TOOL, responsesAsk, upstreamBodies, upstreamCalls, userText } from "./templates-apis.support";

/**
 * A learned template's answer on Responses has no stored node. Served to a client that may chain on its id
 * (`store` unset: the API's default), it is first kept in `served_answers` (src/engine/served-answer.ts), and a
 * later `previous_response_id` naming it is resolved from that row into the whole conversation
 * (src/providers/responses/resolve.ts). A row that cannot be written means no template's answer (a miss).
 * Until session 18 such a request was never served from a template (UNCHAINABLE_TEMPLATE); this file pinned that.
 */

/** The desk's follow-up: the tool's result for `callId`, chained on `previous` (same frame, `store` unset). */
const followUp = (key: string, model: string, previous: string, callId: string) =>
  exports.default.fetch(
    new Request("http://mm.test/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model,
        instructions: SYSTEM,
        tools: [{ type: "function", ...TOOL }],
        previous_response_id: previous,
        input: [{ type: "function_call_output", call_id: callId, output: '{"status":"delivered"}' }],
      }),
    }),
  );

type Output = { id: string; output: Array<{ type: string; call_id: string; name: string; arguments: string }> };

/** Teaches the desk's template with `store` unset (three orders to the model), and waits for the learner. */
async function learned(key: string, model: string): Promise<void> {
  await settled(async () => {
    for (const [order, email] of ORDERS) expect((await responsesAsk(key, model, order, email, {}, {})).headers.get("muscle-mem-cache")).toBe("miss");
  });
  await learningRan();
  expect(upstreamCalls()).toBe(3);
}

/** Rows kept for the served id `id`'s answer (any tenant). */
async function keptRows(id: string): Promise<number> {
  const named = parseServedResponseId(id);
  const row = await env.DB.prepare("SELECT count(*) AS n FROM served_answers WHERE answer_hash = ?1").bind(named?.answerHash).first<{ n: number }>();
  return row?.n ?? 0;
}

describe("learned templates on Responses and response chaining", () => {
  it("Should serve the fourth order from a template with store unset, and resolve a follow-up chained on its id into the whole conversation", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-chain");
    await learned(key, model);
    const res = await responsesAsk(key, model, FOURTH[0], FOURTH[1], {}, {});
    expect([res.headers.get("muscle-mem-cache"), res.headers.get("muscle-mem-template-miss")]).toEqual(["hit", null]);
    expect(res.headers.get("muscle-mem-template")).toMatch(/^[0-9a-f]{32}$/);
    const served = (await res.json()) as Output;
    expect(APIS.responses.call(served)).toEqual({ name: "get_order", args: { order_id: FOURTH[0], email: FOURTH[1] } });
    expect(served.id).toMatch(/^resp_mm/);
    expect(await keptRows(served.id)).toBe(1);
    expect(upstreamCalls()).toBe(3);

    const call = served.output[0];
    const next = await settled(() => followUp(key, model, served.id, call.call_id));
    expect(next.headers.get("muscle-mem-cache")).toBe("miss");
    // The model got the whole conversation: the user's message, the served call with its served id, the result; no id.
    expect(upstreamCalls()).toBe(4);
    const sent = upstreamBodies().at(-1) as { previous_response_id?: string; input: Array<Record<string, unknown>> };
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input).toEqual([
      { role: "user", content: [{ type: "input_text", text: userText(FOURTH[0], FOURTH[1]) }] },
      { type: "function_call", call_id: call.call_id, name: "get_order", arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: '{"status":"delivered"}' },
    ]);
    // Its recording walks through the served answer: the resolved input keys back to the answer's own hash.
    const answerHash = parseServedResponseId(served.id)?.answerHash;
    const node = await env.DB.prepare("SELECT role FROM nodes WHERE hash = ?1").bind(answerHash).first<{ role: string }>();
    expect(node?.role).toBe("assistant");
  });

  it("Should not resolve another tenant's chain on a kept template answer: it reaches the upstream as sent", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-chain-other");
    await learned(key, model);
    const served = (await (await responsesAsk(key, model, FOURTH[0], FOURTH[1], {}, {})).json()) as Output;
    expect(await keptRows(served.id)).toBe(1);
    const res = await settled(() => followUp(newKey(), model, served.id, served.output[0].call_id));
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    const sent = upstreamBodies().at(-1) as { previous_response_id?: string; input: unknown[] };
    expect([sent.previous_response_id, sent.input.length]).toEqual([served.id, 1]);
  });

  it("Should serve no template's answer when it cannot be kept, saying why, while store: false is still served and keeps nothing", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-chain-unkept");
    await learned(key, model);
    await env.DB.exec("ALTER TABLE served_answers RENAME TO served_answers_broken");
    let unkept: { cache: string | null; reason: string | null; call: unknown };
    let stateless: { cache: string | null; template: string | null; id: string };
    try {
      unkept = await settled(async () => {
        const res = await responsesAsk(key, model, FOURTH[0], FOURTH[1], {}, {});
        return { cache: res.headers.get("muscle-mem-cache"), reason: res.headers.get("muscle-mem-template-miss"), call: APIS.responses.call(await res.json()) };
      });
      const res = await responsesAsk(key, model, "E-5005", "eve@example.com", {}, { store: false });
      stateless = { cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template"), id: ((await res.json()) as Output).id };
    } finally {
      await env.DB.exec("ALTER TABLE served_answers_broken RENAME TO served_answers");
    }
    expect(unkept).toEqual({ cache: "miss", reason: UNKEPT_TEMPLATE, call: { name: "get_order", args: { order_id: FOURTH[0], email: FOURTH[1] } } });
    expect(upstreamCalls()).toBe(4);
    expect(stateless.cache).toBe("hit");
    expect(stateless.template).toMatch(/^[0-9a-f]{32}$/);
    expect(await keptRows(stateless.id)).toBe(0);
  });

  it("Should keep a template's answer served as a stream, and resolve a follow-up chained on it", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-chain-stream");
    await learned(key, model);
    const res = await responsesAsk(key, model, FOURTH[0], FOURTH[1], {}, { stream: true });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(res.headers.get("muscle-mem-template")).toMatch(/^[0-9a-f]{32}$/);
    const events = (await res.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: Output });
    const completed = events.find((e) => e.type === "response.completed")?.response;
    expect(completed?.id).toMatch(/^resp_mm/);
    const id = completed?.id ?? "";
    const call = completed?.output[0] ?? { call_id: "", arguments: "" };
    await settled(() => followUp(key, model, id, call.call_id));
    const sent = upstreamBodies().at(-1) as { previous_response_id?: string; input: Array<Record<string, unknown>> };
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input.map((item) => item.call_id ?? item.role)).toEqual(["user", call.call_id, call.call_id]);
    expect(sent.input[1]).toMatchObject({ type: "function_call", arguments: call.arguments });
  });
});
