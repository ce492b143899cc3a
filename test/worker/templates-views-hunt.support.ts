import { env, exports } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { learningRan, settled } from "./settled";

/**
 * The wrong-replay hunt on the template views (test/worker/templates-views-hunt*.test.ts): a scripted model per
 * API (a pure function of the request, answering in the API's own JSON), the three orders that teach a template
 * and a fourth a template serves. Each hunt compares what a template serves with what the model would send.
 */

export type ApiName = "anthropic" | "responses" | "gemini";
/** The routes a hunt sends to: the three APIs a view reads, and the two keyed as chat is (whose upstream is chat's). */
export type Route = ApiName | "chat" | "gemini-openai";
type Body = Record<string, unknown>;
/** The model: the API's JSON response to a request body (or its exact text, `{ raw }`: numbers as the model spells them). */
export type Model = (api: ApiName | "chat", body: Body) => unknown;

/** The orders that teach (an order id and an email the model copies) and the fourth a template serves. */
export { FOURTH, ORDERS } from "../support/desk-orders";

export const ask = (order: string, email: string) => `Please refund order ${order}, my email is ${email}.`;

/** The order and email of the (only) ask in a request, wherever the API puts it. */
export function orderOf(body: Body): { order_id: string; email: string } {
  const [, order_id, email] = /refund order ([^\s,]+), my email is ([^\s"\\]+)\./.exec(JSON.stringify(body)) ?? [];
  return { order_id, email };
}

/**
 * Answers every upstream POST of the three APIs with `model(api, body)` from now until the test's mocks are
 * restored (a streamed request with that answer as the API streams it); GETs (key checks) go through. Counts the POSTs.
 */
export function scriptModel(model: Model): { asked: () => number } {
  let asked = 0;
  const real = globalThis.fetch;
  const gemini = (env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL;
  const origins = [env.ANTHROPIC_BASE_URL, env.UPSTREAM_BASE_URL, gemini].map((b) => new URL(String(b)).origin);
  /** Which API a path is (the three upstreams may share an origin). */
  const apiOf = (path: string): ApiName | "chat" | null =>
    path.endsWith("/chat/completions")
      ? "chat"
      : path.endsWith("/messages")
        ? "anthropic"
        : path.endsWith("/responses")
          ? "responses"
          : path.includes("/models/")
            ? "gemini"
            : null;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    // An official client pointed at the Worker (@google/genai fetches through the global fetch).
    if (url.origin === "http://mm.test") return exports.default.fetch(request);
    const api = origins.includes(url.origin) ? apiOf(url.pathname) : null;
    if (!api || request.method !== "POST" || url.pathname.startsWith("/__")) return real(input, init);
    const body = (await request.json()) as Body;
    asked++;
    if (url.pathname.includes("streamGenerateContent")) return geminiStream(model(api, body));
    if (body.stream === true && api === "chat") return new Response("no chat stream in this script", { status: 500 });
    if (body.stream === true) return api === "anthropic" ? anthropicStream(model(api, body)) : responsesStream(model(api, body));
    const reply = model(api, body) as { raw?: unknown };
    if (typeof reply?.raw === "string") return new Response(reply.raw, { headers: { "content-type": "application/json" } });
    return Response.json(reply);
  });
  return { asked: () => asked };
}

/**
 * A Gemini JSON answer as the API streams it: each text part in two chunks (its halves), then each other part,
 * the last chunk with the finish reason and usage.
 */
function geminiStream(json: unknown): Response {
  const { candidates, usageMetadata, modelVersion } = json as {
    candidates: Array<{ content: { parts: Body[] }; finishReason: string }>;
    usageMetadata: unknown;
    modelVersion: string;
  };
  const pieces = candidates[0].content.parts.flatMap((p) =>
    typeof p.text === "string" && p.text.length > 1 ? [{ text: p.text.slice(0, p.text.length >> 1) }, { text: p.text.slice(p.text.length >> 1) }] : [p],
  );
  const chunks = pieces.map((part, i) => {
    const last = i === pieces.length - 1;
    return JSON.stringify({
      candidates: [{ content: { role: "model", parts: [part] }, ...(last ? { finishReason: candidates[0].finishReason } : {}), index: 0 }],
      ...(last ? { usageMetadata } : {}),
      modelVersion,
    });
  });
  return new Response(chunks.map((c) => `data: ${c}\r\n\r\n`).join(""), { headers: { "content-type": "text/event-stream" } });
}

const sse = (events: Array<[string, unknown]>) =>
  new Response(events.map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream" },
  });
/** A text in two halves (a stream's deltas). */
const halves = (text: string) => [text.slice(0, text.length >> 1), text.slice(text.length >> 1)];

/** An Anthropic JSON answer as the API streams it: each text and each call's input JSON in two deltas. */
function anthropicStream(json: unknown): Response {
  const { content, stop_reason, stop_sequence, usage, ...message } = json as Body & { content: Body[]; usage: Body };
  const events: Array<[string, unknown]> = [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage } }],
  ];
  content.forEach((block, index) => {
    const tool = block.type === "tool_use";
    events.push(["content_block_start", { type: "content_block_start", index, content_block: tool ? { ...block, input: {} } : { ...block, text: "" } }]);
    for (const piece of halves(tool ? JSON.stringify(block.input) : String(block.text)))
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: tool ? { type: "input_json_delta", partial_json: piece } : { type: "text_delta", text: piece } },
      ]);
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason, stop_sequence }, usage: { output_tokens: usage.output_tokens } }]);
  events.push(["message_stop", { type: "message_stop" }]);
  return sse(events);
}

/** A Responses JSON answer as the API streams it: created, each item added and done (a call's arguments in two deltas), completed. */
function responsesStream(json: unknown): Response {
  const response = json as Body & { output: Body[] };
  let n = 0;
  const event = (type: string, data: Body): [string, unknown] => [type, { type, sequence_number: n++, ...data }];
  const events = [event("response.created", { response: { ...response, status: "in_progress", output: [] } })];
  response.output.forEach((item, output_index) => {
    events.push(event("response.output_item.added", { output_index, item: { ...item, status: "in_progress" } }));
    if (item.type === "function_call")
      for (const delta of halves(String(item.arguments)))
        events.push(event("response.function_call_arguments.delta", { item_id: item.id, output_index, delta }));
    events.push(event("response.output_item.done", { output_index, item }));
  });
  events.push(event("response.completed", { response }));
  return sse(events);
}

const post = (path: string, headers: Record<string, string>, body: unknown) =>
  exports.default.fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
  );

/** A request to one API's route (JSON unless `stream`). */
export function send(api: Route, key: string, model: string, body: Body, stream = false): Promise<Response> {
  if (api === "chat" || api === "gemini-openai")
    return post(api === "chat" ? "/v1/chat/completions" : "/v1beta/openai/chat/completions", { authorization: `Bearer ${key}` }, { model, ...body });
  if (api === "anthropic")
    return post("/v1/messages", { "x-api-key": key, "anthropic-version": "2023-06-01" }, { model, ...body, ...(stream ? { stream } : {}) });
  if (api === "responses") return post("/v1/responses", { authorization: `Bearer ${key}` }, { model, store: false, ...body, ...(stream ? { stream } : {}) });
  const path = stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
  return post(path, { "x-goog-api-key": key }, body);
}

/** Sends each request (each a miss the model answers; streamed when `stream`) and runs the learning they queued. */
export async function teach(api: Route, key: string, model: string, bodies: Body[], stream = false): Promise<void> {
  await settled(async () => {
    for (const body of bodies) {
      const res = await send(api, key, model, body, stream);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get("muscle-mem-cache")).toBe("miss");
      await res.text();
    }
  });
  await learningRan();
}

/** One request's response: how the cache answered, the template that served (if one did) and the body. */
export async function served(api: Route, key: string, model: string, body: Body, stream = false) {
  return settled(async () => {
    const res = await send(api, key, model, body, stream);
    return {
      status: res.status,
      cache: res.headers.get("muscle-mem-cache"),
      template: res.headers.get("muscle-mem-template"),
      miss: res.headers.get("muscle-mem-template-miss"),
      text: await res.text(),
    };
  });
}
