import type OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { REFUND_DECISION } from "./clients-upstream";
import { ask, freshKey, useClientsWorker } from "./clients-worker";

/**
 * What the official openai npm client does beyond create(), through `wrangler dev`: raw responses and their
 * headers, streamed usage, the streaming helpers of Chat Completions and Responses, structured output parsed
 * with zod (its retries, timeouts, aborts, headers and default query: clients-openai-faults.test.ts).
 * Each check: a miss that reaches the model, then a hit with the same content, byte for byte where the client
 * exposes it, and no model call.
 */
const worker = useClientsWorker((url) => ({ UPSTREAM_BASE_URL: url }));
const { client, callsTo, waitRecorded } = worker;

/** The parts of a chat completion that a hit serves as recorded (not the ids, `created` or fingerprint it renews). */
function servedAsRecorded(completion: OpenAI.ChatCompletion): unknown {
  return { model: completion.model, choices: completion.choices, usage: completion.usage };
}

describe("the openai npm client beyond create(), through wrangler dev", () => {
  it("withResponse() and asResponse(): the cache outcome in the headers, the same answer from the tree", async () => {
    const key = freshKey();
    const body = { model: "gpt-raw", messages: ask("raw response please") };
    const miss = await client(key).chat.completions.create(body).withResponse();
    expect(miss.response.headers.get("muscle-mem-cache")).toBe("miss");
    expect(miss.response.headers.get("content-type")).toContain("application/json");
    expect(callsTo("gpt-raw")).toHaveLength(1);
    await waitRecorded(key, "chat/completions", body);

    const raw = await client(key).chat.completions.create(body).asResponse();
    expect(raw.headers.get("muscle-mem-cache")).toBe("hit");
    const hit = (await raw.json()) as OpenAI.ChatCompletion;
    expect(hit.choices[0].message.content).toBe(miss.data.choices[0].message.content);
    expect(servedAsRecorded(hit)).toEqual(servedAsRecorded(miss.data));
    expect(callsTo("gpt-raw")).toHaveLength(1);
  });

  it("stream_options.include_usage: the hit streams the same content and ends with a usage chunk, as the miss did", async () => {
    const key = freshKey();
    const body = { model: "gpt-usage", messages: ask("stream with usage"), stream: true as const, stream_options: { include_usage: true } };
    const read = async () => {
      const { data: stream, response } = await client(key).chat.completions.create(body).withResponse();
      let text = "";
      let usage: OpenAI.CompletionUsage | null | undefined;
      let chunksAfterUsage = 0;
      for await (const chunk of stream) {
        if (usage) chunksAfterUsage++;
        text += chunk.choices[0]?.delta.content ?? "";
        if (chunk.usage) {
          usage = chunk.usage;
          expect(chunk.choices).toEqual([]);
        }
      }
      return { outcome: response.headers.get("muscle-mem-cache"), text, usage, chunksAfterUsage };
    };
    const miss = await read();
    expect(miss.outcome).toBe("miss");
    expect(miss.usage?.total_tokens).toBeGreaterThan(0);
    await waitRecorded(key, "chat/completions", body);
    const hit = await read();
    expect(hit.outcome).toBe("hit");
    expect(hit.text).toBe(miss.text);
    expect(hit.usage).toEqual(miss.usage);
    expect(hit.chunksAfterUsage).toBe(0);
    expect(callsTo("gpt-usage")).toHaveLength(1);
  });

  it("chat.completions.stream(): the helper's content events and finalChatCompletion() are the same on the hit", async () => {
    const key = freshKey();
    const body = { model: "gpt-helper", messages: ask("use the stream helper") };
    const run = async () => {
      const stream = client(key).chat.completions.stream(body);
      const deltas: string[] = [];
      let done = "";
      stream.on("content.delta", ({ delta }) => deltas.push(delta));
      stream.on("content.done", ({ content }) => {
        done = content;
      });
      const final = await stream.finalChatCompletion();
      return { deltas: deltas.join(""), done, final };
    };
    const miss = await run();
    expect(miss.done).toBe(miss.final.choices[0].message.content);
    expect(miss.deltas).toBe(miss.done);
    await waitRecorded(key, "chat/completions", { ...body, stream: true });
    const before = worker.upstream.calls.length;
    const hit = await run();
    expect(hit.done).toBe(miss.done);
    expect(hit.deltas).toBe(miss.deltas);
    expect(hit.final.choices[0].message).toEqual(miss.final.choices[0].message);
    expect(hit.final.choices[0].finish_reason).toBe(miss.final.choices[0].finish_reason);
    expect(worker.upstream.calls.length).toBe(before);
  });

  it("responses.stream(): the text and function-call argument events and finalResponse() are the same on the hit", async () => {
    const key = freshKey();
    const tools: OpenAI.Responses.FunctionTool[] = [
      {
        type: "function",
        name: "get_order",
        parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
        strict: false,
      },
    ];
    const body = { model: "gpt-resp-stream", input: "Please refund order #A-1.", tools };
    const run = async () => {
      const stream = client(key).responses.stream(body);
      let text = "";
      let args = "";
      stream.on("response.output_text.delta", (e) => {
        text += e.delta;
      });
      stream.on("response.function_call_arguments.delta", (e) => {
        args += e.delta;
      });
      const final = await stream.finalResponse();
      const call = final.output.find((item) => item.type === "function_call");
      return { text, args, outputText: final.output_text, call: call?.type === "function_call" ? { name: call.name, arguments: call.arguments } : null };
    };
    const miss = await run();
    expect(miss.text).toBe(miss.outputText);
    expect(miss.call).toEqual({ name: "get_order", arguments: JSON.stringify({ order_id: "A-1" }) });
    expect(miss.args).toBe(miss.call?.arguments);
    await waitRecorded(key, "responses", { ...body, stream: true });
    const before = worker.upstream.calls.length;
    const hit = await run();
    expect(hit).toEqual(miss);
    expect(worker.upstream.calls.length).toBe(before);
  });

  it("chat.completions.parse() with a zod response_format: the same parsed object from the tree", async () => {
    const key = freshKey();
    const Decision = z.object({ order_id: z.string(), amount: z.number(), approve: z.boolean() });
    const body = { model: "zod-parse", messages: ask("decide on order A-1"), response_format: zodResponseFormat(Decision, "decision") };
    const miss = await client(key).chat.completions.parse(body).withResponse();
    expect(miss.response.headers.get("muscle-mem-cache")).toBe("miss");
    expect(miss.data.choices[0].message.parsed).toEqual(REFUND_DECISION);
    // The schema reached the model as the client wrote it.
    const sent = worker.upstream.calls.filter((c) => c.model === "zod-parse");
    expect(sent).toHaveLength(1);
    // The helper's parser rides on the response_format as non-enumerable fields: JSON.stringify sends what the client sent.
    await waitRecorded(key, "chat/completions", body);
    const hit = await client(key).chat.completions.parse(body).withResponse();
    expect(hit.response.headers.get("muscle-mem-cache")).toBe("hit");
    expect(hit.data.choices[0].message.content).toBe(miss.data.choices[0].message.content);
    expect(hit.data.choices[0].message.parsed).toEqual(REFUND_DECISION);
    expect(callsTo("zod-parse")).toHaveLength(1);
  });
});
