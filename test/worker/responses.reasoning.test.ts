import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { recordedResponse, responses } from "./responses.support";
import { withUpstream } from "./upstream-stub";

/**
 * A reasoning model (gpt-5, o-series) answers with a `reasoning` item before its message or call; a stateless
 * agent (`store: false`, `include: ["reasoning.encrypted_content"]`) sends that item back, encrypted content
 * included, in its next request. A hit must return the item exactly as the model sent it, and the item, sent
 * back, must be in the key. Before, such an answer was never recorded and such a request never keyed.
 */

const key = () => `sk-resp-reasoning-${crypto.randomUUID()}`;
const model = () => `gpt-reasoning-${crypto.randomUUID().slice(0, 8)}`;
const tools = [
  {
    type: "function",
    name: "get_order",
    description: "Look up an order.",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
    strict: true,
  },
];

const reasoning = (secret: string) => ({
  id: `rs_up${secret}`,
  type: "reasoning",
  summary: [{ type: "summary_text", text: "**Looking up the order**" }],
  encrypted_content: `gAAAAB${secret}==`,
});

/** A completed response as the API sends it for a function call after reasoning. */
function upstreamResponse(m: string, secret: string) {
  return {
    id: "resp_upstream",
    object: "response",
    created_at: 1760000000,
    status: "completed",
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: m,
    output: [
      reasoning(secret),
      { id: "fc_up1", type: "function_call", status: "completed", arguments: '{"order_id":"A-1"}', call_id: "call_up1", name: "get_order" },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools,
    top_p: 1,
    truncation: "disabled",
    usage: {
      input_tokens: 50,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 80,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 130,
    },
    user: null,
    metadata: {},
  };
}

function client(k: string): OpenAI {
  return new OpenAI({ apiKey: k, baseURL: "http://mm.test/v1", maxRetries: 0, fetch: (input, init) => exports.default.fetch(new Request(input, init)) });
}

/**
 * The response without what a hit renews: the response id, created_at, and the message and call ids; and
 * without `output_text`, which the SDK adds to a JSON response, not to a streamed event's.
 */
function comparable(response: OpenAI.Responses.Response): unknown {
  const output = response.output.map((item) =>
    item.type === "function_call" ? { ...item, id: "renewed", call_id: "renewed" } : item.type === "message" ? { ...item, id: "renewed" } : item,
  );
  const { output_text: _sdk, ...rest } = response;
  return { ...rest, id: "renewed", created_at: 0, output };
}

describe("Responses answers with reasoning items", () => {
  it("Should record the answer, serve the reasoning item exactly JSON and streamed, and key it when sent back", async () => {
    const k = key();
    const m = model();
    const first = {
      model: m,
      store: false,
      include: ["reasoning.encrypted_content" as const],
      tools: tools as OpenAI.Responses.FunctionTool[],
      input: [{ role: "user" as const, content: "Refund order A-1." }],
    };
    const miss = await withUpstream({ json: upstreamResponse(m, "first") }, () => client(k).responses.create(first).withResponse());
    expect(miss.response.headers.get("muscle-mem-cache")).toBe("miss");
    await recordedResponse(first, { key: k });

    const hit = await client(k).responses.create(first).withResponse();
    expect(hit.response.headers.get("muscle-mem-cache")).toBe("hit");
    expect(hit.data.output[0]).toEqual(reasoning("first"));
    expect(comparable(hit.data)).toEqual(comparable(miss.data));

    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of await client(k).responses.create({ ...first, stream: true })) if (event.type === "response.completed") completed = event.response;
    expect(completed && comparable(completed)).toEqual(comparable(miss.data));

    // The agent's next turn sends the reasoning item and the call back, with the call's output.
    const next = (items: unknown[]) => ({
      ...first,
      input: [
        ...first.input,
        ...(items as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output" as const, call_id: (hit.data.output[1] as { call_id: string }).call_id, output: '{"status":"delivered"}' },
      ],
    });
    const echo = next(hit.data.output);
    const done = {
      ...upstreamResponse(m, "second"),
      output: [
        reasoning("second"),
        {
          id: "msg_up2",
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Order A-1 was delivered.", annotations: [], logprobs: [] }],
        },
      ],
    };
    const second = await withUpstream({ json: done }, () => client(k).responses.create(echo).withResponse());
    expect(second.response.headers.get("muscle-mem-cache")).toBe("miss");
    await recordedResponse(echo, { key: k });
    const again = await client(k).responses.create(echo).withResponse();
    expect(again.response.headers.get("muscle-mem-cache")).toBe("hit");
    expect(again.data.output[0]).toEqual(reasoning("second"));

    // Other encrypted content is another conversation: never the recorded answer.
    const other = next([{ ...hit.data.output[0], encrypted_content: "gAAAABother==" }, hit.data.output[1]]);
    const res = await responses(other, { key: k, headers: { "cache-control": "only-if-cached" } });
    expect(res.status).toBe(504);
  });
});
