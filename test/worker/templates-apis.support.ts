import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, vi } from "vitest";
import { ORDERS, FOURTH } from "../support/desk-orders";
import { responsesReply } from "../support/responses-reply";
export { ORDERS, FOURTH };

/**
 * The refund desk of test/worker/templates-apis*.test.ts on every cached route: a system prompt, a `get_order`
 * tool, orders whose id and email the scripted model copies into its call, each API's request and the call its
 * answer holds, and an upstream (a stubbed fetch answering in each API's own shape) counted per test.
 */
export const SYSTEM = "You are the refund desk. Look the order up before you refund it.";
export const TOOL = {
  name: "get_order",
  description: "Look an order up.",
  parameters: { type: "object", properties: { order_id: { type: "string" }, email: { type: "string" } }, required: ["order_id", "email"] },
};

export const userText = (order: string, email: string) => `Please refund order ${order}, my email is ${email}.`;

/** What the scripted model reads from a request: the order and email of its (only) user message. */
export function argsOf(text: string): { order_id: string; email: string } {
  const [, order_id, email] = /refund order (\S+), my email is (\S+)\./.exec(text) ?? [];
  return { order_id, email };
}

let asked = 0;
/** The upstream POSTs since the test began. */
export const upstreamCalls = (): number => asked;
let bodies: Record<string, unknown>[] = [];
/** The bodies of the upstream POSTs since the test began, in order. */
export const upstreamBodies = (): readonly Record<string, unknown>[] => bodies;
let nextId = 0;
/** Every upstream POST of the four APIs answers with the model's `get_order` call; GETs (key checks) go through. */
beforeEach(() => {
  asked = 0;
  bodies = [];
  const real = globalThis.fetch;
  const origins = [env.UPSTREAM_BASE_URL, env.ANTHROPIC_BASE_URL, (env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL].map(
    (b) => new URL(String(b)).origin,
  );
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (!origins.includes(url.origin) || request.method !== "POST" || url.pathname.startsWith("/__")) return real(input, init);
    const body = (await request.json()) as Record<string, unknown>;
    asked++;
    bodies.push(body);
    const id = ++nextId;
    if (url.pathname.endsWith("/chat/completions")) {
      const args = argsOf(JSON.stringify((body.messages as Array<{ content: string }>).at(-1)?.content));
      const call = { id: `call_${id}`, type: "function", function: { name: "get_order", arguments: JSON.stringify(args) } };
      return Response.json({
        id: `chatcmpl-${id}`,
        object: "chat.completion",
        created: 1,
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: "tool_calls" }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    }
    if (url.pathname.endsWith("/messages")) {
      const args = argsOf(JSON.stringify(body.messages));
      return Response.json({
        id: `msg_${id}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "tool_use", id: `toolu_${id}`, name: "get_order", input: args }],
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      });
    }
    if (url.pathname.endsWith("/responses")) {
      const args = argsOf(JSON.stringify(body.input));
      const call = { id: `fc_${id}`, type: "function_call", status: "completed", call_id: `call_${id}`, name: "get_order", arguments: JSON.stringify(args) };
      return Response.json(responsesReply(body.model, [call], id));
    }
    const model = /models\/([^:]+):/.exec(url.pathname)?.[1] ?? "";
    const args = argsOf(JSON.stringify(body.contents));
    return Response.json({
      candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "get_order", args } }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: model,
    });
  });
});
afterEach(() => vi.restoreAllMocks());

/** One API's request of an order and the tool call (name and parsed arguments) its answer holds. */
export interface Api {
  /** Whether the route gets learned templates (every cached route: keyed as chat, or read as chat through a template view). */
  learns: boolean;
  /** Whether the route reads declared variables (`muscle-mem-bindings`): the routes keyed as chat is, Anthropic Messages and native Gemini (not Responses). */
  declared: boolean;
  send: (key: string, model: string, order: string, email: string, extra?: Record<string, string>) => Promise<Response>;
  call: (body: unknown) => { name: string; args: unknown };
}

const post = (path: string, headers: Record<string, string>, body: unknown) =>
  exports.default.fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
  );

/** The desk's Chat Completions request at `path` (OpenAI's route or Gemini's OpenAI-compatible one). */
const chatAt = (path: string, key: string, model: string, order: string, email: string, extra: Record<string, string>) =>
  post(
    path,
    { authorization: `Bearer ${key}`, ...extra },
    {
      model,
      tools: [{ type: "function", function: TOOL }],
      messages: [
        { role: "system", content: SYSTEM },
        { role: "user", content: userText(order, email) },
      ],
    },
  );

/**
 * The desk's Responses request; `fields` adds to it (`store: false`, as Codex sends, or `stream`). Without
 * `store: false` a template's answer is kept before it is served, so that its id can be chained on
 * (src/engine/served-answer.ts).
 */
export const responsesAsk = (key: string, model: string, order: string, email: string, extra: Record<string, string>, fields: Record<string, unknown>) =>
  post(
    "/v1/responses",
    { authorization: `Bearer ${key}`, ...extra },
    { model, instructions: SYSTEM, tools: [{ type: "function", ...TOOL }], input: [{ role: "user", content: userText(order, email) }], ...fields },
  );

export const APIS: Record<string, Api> = {
  chat: {
    learns: true,
    declared: true,
    send: (key, model, order, email, extra = {}) => chatAt("/v1/chat/completions", key, model, order, email, extra),
    call: (body) => {
      const fn = (body as { choices: Array<{ message: { tool_calls: Array<{ function: { name: string; arguments: string } }> } }> }).choices[0].message
        .tool_calls[0].function;
      return { name: fn.name, args: JSON.parse(fn.arguments) };
    },
  },
  "gemini-openai": {
    learns: true,
    declared: true,
    send: (key, model, order, email, extra = {}) => chatAt("/v1beta/openai/chat/completions", key, model, order, email, extra),
    call: (body) => APIS.chat.call(body),
  },
  anthropic: {
    learns: true,
    declared: true,
    send: (key, model, order, email, extra = {}) =>
      post(
        "/v1/messages",
        { "x-api-key": key, "anthropic-version": "2023-06-01", ...extra },
        {
          model,
          max_tokens: 1024,
          system: SYSTEM,
          tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.parameters }],
          messages: [{ role: "user", content: userText(order, email) }],
        },
      ),
    call: (body) => {
      const block = (body as { content: Array<{ type: string; name: string; input: unknown }> }).content.find((b) => b.type === "tool_use");
      return { name: block?.name ?? "", args: block?.input };
    },
  },
  responses: {
    learns: true,
    declared: false,
    send: (key, model, order, email, extra = {}) => responsesAsk(key, model, order, email, extra, { store: false }),
    call: (body) => {
      const item = (body as { output: Array<{ type: string; name: string; arguments: string }> }).output.find((i) => i.type === "function_call");
      return { name: item?.name ?? "", args: JSON.parse(item?.arguments ?? "null") };
    },
  },
  gemini: {
    learns: true,
    declared: true,
    send: (key, model, order, email, extra = {}) =>
      post(
        `/v1beta/models/${model}:generateContent`,
        { "x-goog-api-key": key, ...extra },
        {
          systemInstruction: { parts: [{ text: SYSTEM }] },
          tools: [{ functionDeclarations: [TOOL] }],
          contents: [{ role: "user", parts: [{ text: userText(order, email) }] }],
        },
      ),
    call: (body) => {
      const part = (
        body as { candidates: Array<{ content: { parts: Array<{ functionCall?: { name: string; args: unknown } }> } }> }
      ).candidates[0].content.parts.find((p) => p.functionCall);
      return { name: part?.functionCall?.name ?? "", args: part?.functionCall?.args };
    },
  },
};
