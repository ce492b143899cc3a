import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { generations, uniqueModel } from "./helpers";
import { settled } from "./settled";

/** The openai package, talking to the Worker in this isolate; records each response's cache outcome. */
function client(key: string, outcomes: string[]): OpenAI {
  return new OpenAI({
    apiKey: key,
    baseURL: "http://mm.test/v1",
    maxRetries: 0,
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const res = await exports.default.fetch(new Request(input, init));
      outcomes.push(res.headers.get("muscle-mem-cache") ?? "none");
      return res;
    },
  });
}

const tools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } } },
  { type: "function", function: { name: "refund", parameters: { type: "object", properties: { order_id: { type: "string" }, amount: { type: "number" } } } } },
];

/**
 * The refund desk in a hand-written loop: `create`, or the `.stream()` helper's final completion, whose assistant
 * message the agent appends as it comes. Python's openai helper (`client.chat.completions.stream(...)
 * .get_final_completion()`) leaves the streamed delta's `index` on each tool call of that message; the Node
 * package's (6.49) does not, so the loop adds it as Python's does (the Python run, scripts/python-compat/, sends it for real).
 */
async function run(openai: OpenAI, model: string, helper: boolean): Promise<{ final: string; sent: OpenAI.ChatCompletionMessageParam[] }> {
  const history: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Please refund order #A-1." }];
  for (let turn = 0; turn < 6; turn++) {
    const body = { model, messages: history, tools };
    const completion = helper ? await openai.chat.completions.stream(body).finalChatCompletion() : await openai.chat.completions.create(body);
    const message = completion.choices[0].message;
    const calls = helper ? message.tool_calls?.map((call, index) => ({ ...call, index })) : message.tool_calls;
    history.push({ ...message, tool_calls: calls } as OpenAI.ChatCompletionMessageParam);
    if (!message.tool_calls?.length) return { final: message.content ?? "", sent: history };
    for (const call of message.tool_calls) {
      if (call.type !== "function") continue;
      const args = JSON.parse(call.function.arguments) as { order_id: string };
      const output =
        call.function.name === "get_order" ? { order_id: args.order_id, status: "delivered", amount: 42.5 } : { order_id: args.order_id, refunded: true };
      history.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(output) });
    }
  }
  throw new Error("the agent did not finish");
}

describe("openai's .stream() helper (issue 27, item 1)", () => {
  it("Should serve a run recorded with create to the same run through the .stream() helper: hit on every turn", async () => {
    const model = uniqueModel("helper");
    const key = `sk-helper-${crypto.randomUUID().slice(0, 8)}`;
    const recorded: string[] = [];
    // The recordings land after the answers (in their waitUntil): settled, every turn is recorded.
    const first = await settled(() => run(client(key, recorded), model, false));
    expect(recorded).toEqual(["miss", "miss", "miss"]);
    const outcomes: string[] = [];
    const repeat = await run(client(key, outcomes), model, true);
    // The helper's assistant messages carry `index: 0` on their tool calls: not part of the key.
    const echoed = repeat.sent.find((m) => m.role === "assistant" && m.tool_calls?.length) as unknown as { tool_calls: Array<Record<string, unknown>> };
    expect(echoed.tool_calls[0].index).toBe(0);
    expect(outcomes).toEqual(["hit", "hit", "hit"]);
    expect(repeat.final).toBe(first.final);
    expect(await generations(model)).toBe(3);
  });

  it("Should key an index that is not the call's position", async () => {
    const model = uniqueModel("helper");
    const key = `sk-helper-${crypto.randomUUID().slice(0, 8)}`;
    const outcomes: string[] = [];
    // settled: every turn is recorded before the probes.
    const first = await settled(() => run(client(key, outcomes), model, false));
    const probe = client(key, []);
    const turn2 = first.sent.slice(0, 3);
    // The second turn as sent is recorded: only the moved index below can make it miss.
    await probe.chat.completions.create({ model, messages: turn2, tools }, { headers: { "cache-control": "only-if-cached" } });
    const moved = turn2.map((m) => (m.role === "assistant" && m.tool_calls ? { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, index: 3 })) } : m));
    const err = await probe.chat.completions
      .create({ model, messages: moved as OpenAI.ChatCompletionMessageParam[], tools }, { headers: { "cache-control": "only-if-cached" } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
  });
});
