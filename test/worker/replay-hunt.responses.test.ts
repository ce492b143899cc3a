import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { settled } from "./settled";
import { withUpstream, type StubReply } from "./upstream-stub";

/**
 * The answer side of a wrong replay, OpenAI Responses: the output items of a hit must be what the model sent
 * (ids aside), read through the `openai` package (`responses.create`, and `responses.stream`'s final
 * response), or the answer must not be recorded.
 */

type Item = Record<string, unknown>;

function client(key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: "http://mm.test/v1", maxRetries: 0, fetch: (input, init) => exports.default.fetch(new Request(input, init)) });
}

/** A completed response around `output`, as the API sends it. */
function responseOf(model: string, output: Item[], status = "completed"): Item {
  return {
    id: "resp_up",
    object: "response",
    created_at: 1,
    status,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    model,
    output,
    usage: { input_tokens: 5, output_tokens: 7, total_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
  };
}

/** The output items a client reads, without what a hit renews (item ids, call ids). */
function itemsOf(response: { output: unknown[] }): Item[] {
  return (response.output as Item[]).map((item) => {
    // `parsed_arguments`: what the `.stream()` helper adds to every call.
    const { id: _id, call_id: callId, parsed_arguments: _parsed, ...rest } = item;
    // and `parsed` on each text part.
    const content = Array.isArray(rest.content) ? { content: (rest.content as Item[]).map(({ parsed: _p, ...part }) => part) } : {};
    return item.type === "reasoning" ? item : { ...rest, ...content, ...(callId === undefined ? {} : { call_id: "renewed" }) };
  });
}

/** The miss's output items and each hit's (null when nothing was recorded), for an upstream answering `reply`. */
async function missAndHits(model: string, reply: StubReply) {
  const openai = client(`sk-resp-hunt-${crypto.randomUUID()}`);
  const body = { model, input: "Refund order A-1." };
  const miss = await settled(() => withUpstream(reply, () => openai.responses.create(body)));
  const probe = async (stream: boolean) => {
    const headers = { "cache-control": "only-if-cached" };
    try {
      return stream ? await openai.responses.stream(body, { headers }).finalResponse() : await openai.responses.create(body, { headers });
    } catch (error) {
      if (error instanceof OpenAI.APIError && error.status === 504) return null;
      throw error;
    }
  };
  return { miss, json: await probe(false), stream: await probe(true) };
}

describe("replay hunt: OpenAI Responses", () => {
  it("Should serve a message whose output_text is empty with that part (was: `content: []`)", async () => {
    const model = `resp-hunt-${crypto.randomUUID().slice(0, 8)}`;
    const output = [
      { type: "message", id: "msg_up", status: "completed", role: "assistant", content: [{ type: "output_text", text: "", annotations: [], logprobs: [] }] },
      { type: "function_call", id: "fc_up", status: "completed", call_id: "call_up", name: "refund", arguments: '{"qty": 1.0}' },
    ];
    const out = await missAndHits(model, { json: responseOf(model, output) });
    for (const hit of [out.json, out.stream]) if (hit) expect(itemsOf(hit)).toEqual(itemsOf(out.miss));
  });

  it("Should serve a reasoning item as sent and calls in order with their arguments byte for byte", async () => {
    const model = `resp-hunt-${crypto.randomUUID().slice(0, 8)}`;
    const output = [
      { type: "reasoning", id: "rs_up", summary: [{ type: "summary_text", text: "Think." }], encrypted_content: "gAAAA==" },
      { type: "function_call", id: "fc_up", status: "completed", call_id: "call_up", name: "refund", arguments: '{"b":1.0,"a":"\\u2028"}' },
      { type: "function_call", id: "fc_up2", status: "completed", call_id: "call_up2", name: "notify", arguments: "{}" },
    ];
    const out = await missAndHits(model, { json: responseOf(model, output) });
    expect(out.json).not.toBeNull();
    for (const hit of [out.json, out.stream]) if (hit) expect(itemsOf(hit)).toEqual(itemsOf(out.miss));
  });

  it("Should not record an incomplete response", async () => {
    const model = `resp-hunt-${crypto.randomUUID().slice(0, 8)}`;
    const output = [
      {
        type: "message",
        id: "msg_up",
        status: "incomplete",
        role: "assistant",
        content: [{ type: "output_text", text: "Cut", annotations: [], logprobs: [] }],
      },
    ];
    const out = await missAndHits(model, { json: responseOf(model, output, "incomplete") });
    expect(out.json).toBeNull();
  });

  it("Should not record a message whose content is a string (was: served as a list of parts)", async () => {
    const model = `resp-hunt-${crypto.randomUUID().slice(0, 8)}`;
    const output = [{ type: "message", id: "msg_up", status: "completed", role: "assistant", content: "Refunded." }];
    const out = await missAndHits(model, { json: responseOf(model, output) });
    expect([out.json, out.stream]).toEqual([null, null]);
  });
});
