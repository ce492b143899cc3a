import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { NODE_HEADER } from "../../src/core/protocol";
import { eventsOf, recordedResponse } from "./responses.support";
import { scriptedResponses } from "../support/responses-upstream";

type Item = Record<string, unknown>;
type Body = Record<string, unknown> & { model: string; input: string | Item[] };

/**
 * A refund desk that issues its own response and call ids, as OpenAI does: it looks the order up, refunds
 * it, then says so. It answers 400, as the API would, to an output whose call it was not sent, and to a
 * `previous_response_id` (it keeps no state: a resolved request must reach it whole).
 */
function answerTo(body: Body, n: number): Item[] | string {
  if (body.previous_response_id !== undefined) return "previous_response_id reached the upstream";
  const items: Item[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  const calls = new Set(items.filter((i) => i.type === "function_call").map((i) => i.call_id));
  const outputs = items.filter((i) => i.type === "function_call_output");
  if (outputs.some((o) => !calls.has(o.call_id))) return `No tool call found for function call output with call_id ${String(outputs.at(-1)?.call_id)}`;
  const call = (name: string, args: unknown) => ({
    id: `fc_up${n}`,
    type: "function_call",
    status: "completed",
    call_id: `call_up${n}`,
    name,
    arguments: JSON.stringify(args),
  });
  const last = items[items.length - 1];
  if (last.type !== "function_call_output") return [call("get_order", { order_id: "A-1" })];
  const data = JSON.parse(String(last.output)) as { refunded?: boolean };
  if (!data.refunded) return [call("refund", { order_id: "A-1" })];
  return [
    {
      id: `msg_up${n}`,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Order A-1 was refunded.", annotations: [], logprobs: [] }],
    },
  ];
}

const upstream = scriptedResponses<Body>(answerTo, () => ({ id: `resp_up${crypto.randomUUID().replaceAll("-", "")}`, created_at: 1 }));

const tools = [
  { type: "function", name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } },
  { type: "function", name: "refund", parameters: { type: "object", properties: { order_id: { type: "string" } } } },
];
const DESK: Record<string, unknown> = { get_order: { order_id: "A-1", status: "delivered" }, refund: { order_id: "A-1", refunded: true } };

function send(body: Body, key: string): Promise<Response> {
  return exports.default.fetch(
    new Request("http://mm.test/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    }),
  );
}

/** A response's body, JSON or from its `response.completed` event. */
async function responseOf(res: Response, stream: boolean): Promise<{ id: string; output: Item[] }> {
  if (!stream) return (await res.json()) as { id: string; output: Item[] };
  const completed = eventsOf(await res.text()).find((e) => e.type === "response.completed");
  return completed?.response as { id: string; output: Item[] };
}

/** One agent run chained by `previous_response_id`: the cache outcome of each call, the final text, and the requests sent. */
async function chainedRun(model: string, key: string, stream: boolean): Promise<{ outcomes: string[]; text: string; sent: Body[] }> {
  const outcomes: string[] = [];
  const sent: Body[] = [];
  let previous: string | undefined;
  let input: string | Item[] = "Please refund order A-1.";
  for (let turn = 0; turn < 5; turn++) {
    const body: Body = { model, input, tools, stream, ...(previous ? { previous_response_id: previous } : {}) };
    sent.push(body);
    const res = await send(body, key);
    expect(res.status).toBe(200);
    outcomes.push(res.headers.get("muscle-mem-cache") ?? "none");
    const response = await responseOf(res, stream);
    const calls = response.output.filter((i) => i.type === "function_call");
    if (calls.length === 0) {
      const message = response.output.find((i) => i.type === "message") as { content: Array<{ text: string }> };
      return { outcomes, text: message.content[0].text, sent };
    }
    previous = response.id;
    input = calls.map((c) => ({ type: "function_call_output", call_id: c.call_id, output: JSON.stringify(DESK[String(c.name)]) }));
  }
  throw new Error("the agent did not finish");
}

/** Waits until each request of a run (resolved the same way) is recorded. */
async function recordedRun(sent: readonly Body[], key: string): Promise<void> {
  for (const body of sent) await recordedResponse(body, { key });
}

describe("Responses chained by the upstream's own previous_response_id", () => {
  for (const stream of [false, true]) {
    it(`Should record every chained turn on the first run and serve the whole chain on the second (${stream ? "streamed" : "JSON"})`, async () => {
      const key = `sk-upid-${crypto.randomUUID().slice(0, 8)}`;
      const model = `upid-${stream ? "s" : "j"}-${crypto.randomUUID().slice(0, 8)}`;
      const first = await chainedRun(model, key, stream);
      expect(first.outcomes).toEqual(["miss", "miss", "miss"]);
      expect(first.text).toBe("Order A-1 was refunded.");
      // Each chained turn reached the upstream whole: the conversation so far, with the upstream's own call ids, and no id.
      expect(upstream.asked).toHaveLength(3);
      expect(upstream.asked[2].previous_response_id).toBeUndefined();
      expect((upstream.asked[2].input as Item[]).map((i) => i.type ?? i.role)).toEqual([
        "user",
        "function_call",
        "function_call_output",
        "function_call",
        "function_call_output",
      ]);
      expect((upstream.asked[2].input as Item[])[1]).toMatchObject({ type: "function_call", name: "get_order" });

      await recordedRun(first.sent, key);
      const second = await chainedRun(model, key, stream);
      expect(second.outcomes).toEqual(["hit", "hit", "hit"]);
      expect(second.text).toBe("Order A-1 was refunded.");
      expect(upstream.asked).toHaveLength(3);
    });
  }

  it("Should not resolve another tenant's upstream id, nor one whose answer was pruned", async () => {
    const owner = `sk-upid-owner-${crypto.randomUUID().slice(0, 8)}`;
    const model = `upid-t-${crypto.randomUUID().slice(0, 8)}`;
    const res = await send({ model, input: "Please refund order A-1.", tools }, owner);
    const first = await responseOf(res, false);
    expect(first.id).toMatch(/^resp_up/);
    await recordedResponse({ model, input: "Please refund order A-1.", tools }, { key: owner });
    const callId = first.output.find((i) => i.type === "function_call")?.call_id;
    const next = (id: string) => ({
      model,
      previous_response_id: id,
      tools,
      input: [{ type: "function_call_output", call_id: callId, output: JSON.stringify(DESK.get_order) }],
    });

    // Another tenant sending the owner's id: passed through as sent, never resolved into the owner's conversation.
    const stranger = await send(next(first.id), `sk-upid-stranger-${crypto.randomUUID().slice(0, 8)}`);
    expect(stranger.headers.get("muscle-mem-cache")).toBe("bypass");
    await stranger.arrayBuffer();
    expect(upstream.asked.at(-1)?.previous_response_id).toBe(first.id);

    // The owner's own id resolves; once its tree is pruned it no longer does.
    const own = await send(next(first.id), owner);
    expect(own.headers.get("muscle-mem-cache")).toBe("miss");
    await own.arrayBuffer();
    const hit = await send({ model, input: "Please refund order A-1.", tools }, owner);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    await hit.arrayBuffer();
    const pruned = await exports.default.fetch(
      new Request(`http://mm.test/api/nodes/${hit.headers.get(NODE_HEADER)}`, { method: "DELETE", headers: { authorization: `Bearer ${owner}` } }),
    );
    expect(pruned.status).toBe(200);
    await pruned.arrayBuffer();
    const after = await send(next(first.id), owner);
    expect(after.headers.get("muscle-mem-cache")).toBe("bypass");
    await after.arrayBuffer();
  });
});
