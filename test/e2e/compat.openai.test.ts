import OpenAI from "openai";
import type { RunnableToolFunctionWithParse } from "openai/lib/RunnableFunction";
import { afterAll, beforeAll, describe } from "vitest";
import { GET_ORDER_SCHEMA, matrixRow, PROMPT, REFUND_SCHEMA, startCompatWorld, type CompatWorld, type Desk, type Runner } from "./support-compat";

let world: CompatWorld;
beforeAll(async () => {
  world = await startCompatWorld();
});
afterAll(async () => {
  await world?.stop();
});

type OrderArgs = { order_id: string };
type RefundArgs = { order_id: string; amount: number };

function deskTools(desk: Desk): [RunnableToolFunctionWithParse<OrderArgs>, RunnableToolFunctionWithParse<RefundArgs>] {
  return [
    {
      type: "function",
      function: {
        name: "get_order",
        description: "Look up an order by id.",
        parameters: GET_ORDER_SCHEMA,
        parse: (raw: string) => JSON.parse(raw) as OrderArgs,
        function: (a: OrderArgs) => desk.getOrder(a.order_id),
      },
    },
    {
      type: "function",
      function: {
        name: "refund",
        description: "Refund an order in full.",
        parameters: REFUND_SCHEMA,
        parse: (raw: string) => JSON.parse(raw) as RefundArgs,
        function: (a: RefundArgs) => desk.refund(a.order_id, a.amount),
      },
    },
  ];
}

const client = (key: string, fetch: typeof globalThis.fetch) => new OpenAI({ apiKey: key, baseURL: `${world.dev.url}/v1`, maxRetries: 0, fetch });
const messages = (): OpenAI.ChatCompletionMessageParam[] => [{ role: "user", content: PROMPT }];

/** `chat.completions.runTools`, the openai package's own tool loop, non-streamed or streamed. */
const runTools: Runner = async ({ key, stream, desk, fetch }) => {
  const body = { model: "gpt-compat", messages: messages(), tools: deskTools(desk) };
  const runner = stream ? client(key, fetch).chat.completions.runTools({ ...body, stream: true }) : client(key, fetch).chat.completions.runTools(body);
  return (await runner.finalContent()) ?? "";
};

/** `chat.completions.create` and the `chat.completions.stream` helper in a hand-written loop. */
const createAndStream: Runner = async ({ key, stream, desk, fetch }) => {
  const openai = client(key, fetch);
  const history = messages();
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: "function", function: { name: "get_order", parameters: GET_ORDER_SCHEMA } },
    { type: "function", function: { name: "refund", parameters: REFUND_SCHEMA } },
  ];
  for (let turn = 0; turn < 6; turn++) {
    const body = { model: "gpt-compat-loop", messages: history, tools };
    const completion = stream ? await openai.chat.completions.stream(body).finalChatCompletion() : await openai.chat.completions.create(body);
    const message = completion.choices[0].message;
    history.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
    if (!message.tool_calls?.length) return message.content ?? "";
    for (const call of message.tool_calls) {
      if (call.type !== "function") continue;
      const args = JSON.parse(call.function.arguments) as { order_id: string; amount: number };
      const output = call.function.name === "get_order" ? desk.getOrder(args.order_id) : desk.refund(args.order_id, args.amount);
      history.push({ role: "tool", tool_call_id: call.id, content: output });
    }
  }
  throw new Error("the agent did not finish");
};

describe("compatibility: openai (npm) through wrangler dev", () => {
  matrixRow("openai runTools", () => world, "openai", runTools);
  matrixRow("openai create/stream", () => world, "openai", createAndStream);
});
