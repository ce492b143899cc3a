import Anthropic from "@anthropic-ai/sdk";
import type { GenerateContentResponse, Part } from "@google/genai/web";
import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";
import { type ApiName, ask, FOURTH, type Model, ORDERS, orderOf, scriptModel, served, teach } from "./templates-views-hunt.support";
import { responsesReply } from "../support/responses-reply";

/**
 * A template's answer streamed, on each API a template view serves (the eval sends JSON; agents stream): the
 * stream must be one the official client reads as the same message the JSON hit gives (ids aside), and as the
 * message the model would have sent: a text and a `refund` call copying the order id and the email.
 */

afterEach(() => vi.restoreAllMocks());

const SYSTEM = "You are the refund desk. Refund the order the user names.";
const schema = { type: "object", properties: { order_id: { type: "string" }, email: { type: "string" } }, required: ["order_id", "email"] };
const say = (o: string, e: string) => `Refunding order ${o} for ${e}.`;

let n = 0;
/** The desk's model on each API: a text, then the refund call (its input as JSON.stringify writes it). */
const desk: Model = (api, body) => {
  const { order_id, email } = orderOf(body);
  const args = { order_id, email };
  const id = ++n;
  if (api === "anthropic")
    return {
      id: `msg_${id}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: [
        { type: "text", text: say(order_id, email) },
        { type: "tool_use", id: `toolu_${id}`, name: "refund", input: args },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
  if (api === "responses")
    return responsesReply(
      body.model,
      [
        {
          id: `msg_${id}`,
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: say(order_id, email), annotations: [], logprobs: [] }],
        },
        { id: `fc_${id}`, type: "function_call", status: "completed", call_id: `call_${id}`, name: "refund", arguments: JSON.stringify(args) },
      ],
      id,
    );
  return {
    candidates: [
      { content: { role: "model", parts: [{ text: say(order_id, email) }, { functionCall: { name: "refund", args } }] }, finishReason: "STOP", index: 0 },
    ],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: String(body.model ?? "gemini"),
  };
};

/** The desk's request of an order on each API. */
function request(api: ApiName, order: string, email: string): Record<string, unknown> {
  if (api === "anthropic")
    return { max_tokens: 1024, system: SYSTEM, tools: [{ name: "refund", input_schema: schema }], messages: [{ role: "user", content: ask(order, email) }] };
  if (api === "responses")
    return { instructions: SYSTEM, tools: [{ type: "function", name: "refund", parameters: schema }], input: [{ role: "user", content: ask(order, email) }] };
  return {
    systemInstruction: { parts: [{ text: SYSTEM }] },
    tools: [{ functionDeclarations: [{ name: "refund", parameters: schema }] }],
    contents: [{ role: "user", parts: [{ text: ask(order, email) }] }],
  };
}

const workerFetch = (input: string | URL | Request, init?: RequestInit) => exports.default.fetch(new Request(input, init));

type Block = Record<string, unknown>;
/** An Anthropic message's blocks without the ids a hit renews. */
const blocksOf = (content: unknown[]) => (content as Block[]).map(({ id: _id, ...rest }) => rest);
/** A Responses output without the ids a hit renews, and without what the `.stream()` helper adds (parsed_arguments, parsed). */
const itemsOf = (output: unknown[]) =>
  (output as Block[]).map(({ id: _id, call_id: _call, parsed_arguments: _p, ...rest }) =>
    Array.isArray(rest.content) ? { ...rest, content: (rest.content as Block[]).map(({ parsed: _q, ...part }) => part) } : rest,
  );
/** Gemini parts with adjacent plain texts joined (a stream may split a text across chunks). */
function joined(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    const last = out.at(-1);
    if (last && Object.keys(part).length === 1 && typeof part.text === "string" && Object.keys(last).length === 1 && typeof last.text === "string")
      out[out.length - 1] = { text: last.text + part.text };
    else out.push(part);
  }
  return out;
}

/** The fourth order through the official client, streamed: what it reads as the whole message. */
async function streamed(api: ApiName, key: string, model: string): Promise<unknown> {
  const body = request(api, ...FOURTH);
  if (api === "gemini") {
    // Gemini's SSE chunks, each read as the client reads one (a GenerateContentResponse per `data:` line).
    const sse = await served(api, key, model, body, true);
    expect([sse.status, sse.cache, sse.template !== null], sse.text).toEqual([200, "hit", true]);
    const parts: Part[] = [];
    let finish: unknown;
    for (const data of sse.text.split(/\r?\n\r?\n/).filter((e) => e.startsWith("data: "))) {
      const chunk = JSON.parse(data.slice(6)) as GenerateContentResponse;
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    return { parts: joined(parts), finishReason: finish };
  }
  return settled(async () => {
    if (api === "anthropic") {
      const client = new Anthropic({ apiKey: key, baseURL: "http://mm.test", maxRetries: 0, fetch: workerFetch });
      const message = await client.messages.stream({ model, ...(body as Omit<Anthropic.MessageCreateParamsNonStreaming, "model">) }).finalMessage();
      return { content: blocksOf(message.content), stop_reason: message.stop_reason };
    }
    if (api === "responses") {
      const client = new OpenAI({ apiKey: key, baseURL: "http://mm.test/v1", maxRetries: 0, fetch: workerFetch });
      const response = await client.responses
        .stream({ model, store: false, ...(body as { instructions: string; tools: OpenAI.Responses.Tool[]; input: OpenAI.Responses.ResponseInput }) })
        .finalResponse();
      return { output: itemsOf(response.output), status: response.status };
    }
    throw new Error(api);
  });
}

/** The JSON hit's message, in the form `streamed` reads. */
function jsonMessage(api: ApiName, text: string): unknown {
  const body = JSON.parse(text) as Block;
  if (api === "anthropic") return { content: blocksOf(body.content as unknown[]), stop_reason: body.stop_reason };
  if (api === "responses") return { output: itemsOf(body.output as unknown[]), status: body.status };
  const candidate = (body.candidates as Array<{ content: { parts: Part[] }; finishReason: string }>)[0];
  return { parts: joined(candidate.content.parts), finishReason: candidate.finishReason };
}

/** What the model itself would send for the fourth order, in the form `streamed` reads. */
function modelMessage(api: ApiName): unknown {
  const body = desk(api, { model: "m", ...request(api, ...FOURTH) }) as Block;
  return jsonMessage(api, JSON.stringify(body));
}

describe.each(["anthropic", "responses", "gemini"] as const)("a template's answer streamed on %s", (api) => {
  it("Should stream the message the JSON hit serves, which is the model's own for the fourth order (ids aside)", async () => {
    const upstream = scriptModel(desk);
    const key = newKey();
    const model = uniqueModel(`hview-stream-${api}`);
    await teach(
      api,
      key,
      model,
      ORDERS.map(([o, e]) => request(api, o, e)),
    );
    const json = await served(api, key, model, request(api, ...FOURTH));
    expect([json.status, json.cache, json.template !== null], json.text).toEqual([200, "hit", true]);
    expect(jsonMessage(api, json.text)).toEqual(modelMessage(api));
    expect(await streamed(api, key, model)).toEqual(modelMessage(api));
    expect(upstream.asked()).toBe(3);
  });
});

describe.each(["anthropic", "responses", "gemini"] as const)("a template learned from streamed answers on %s (texts and arguments in pieces)", (api) => {
  it("Should serve the fourth order the model's message, JSON and streamed", async () => {
    const upstream = scriptModel(desk);
    const key = newKey();
    const model = uniqueModel(`hview-streamed-${api}`);
    await teach(
      api,
      key,
      model,
      ORDERS.map(([o, e]) => request(api, o, e)),
      true,
    );
    const json = await served(api, key, model, request(api, ...FOURTH));
    expect([json.status, json.cache, json.template !== null], json.text).toEqual([200, "hit", true]);
    expect(jsonMessage(api, json.text)).toEqual(modelMessage(api));
    if (api === "gemini") {
      // The JSON hit's parts as the model's JSON answer has them (one text part), not split as the recordings arrived.
      const parts = (JSON.parse(json.text) as { candidates: Array<{ content: { parts: unknown[] } }> }).candidates[0].content.parts;
      expect(parts).toEqual([{ text: say(...FOURTH) }, { functionCall: { name: "refund", args: { order_id: FOURTH[0], email: FOURTH[1] } } }]);
    }
    expect(await streamed(api, key, model)).toEqual(modelMessage(api));
    expect(upstream.asked()).toBe(3);
  });
});
