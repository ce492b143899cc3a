import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { api, ok, type Tree, importFor } from "./api-helpers";
import { recordedResponse, responses } from "./responses.support";
import { withUpstream } from "./upstream-stub";

/**
 * A `response` carries, around its output, what the upstream decided or echoed: the reasoning effort it
 * applied, the text verbosity, the tier that answered, billing, the tools as it normalised them, … A hit
 * serves the recorded values of those, this request's values of the echo fields the key leaves out
 * (`metadata`, `user`, `safety_identifier`, `prompt_cache_key`, `store`, `previous_response_id`), its own id
 * and timestamps, and the recorded usage with no cached input (a hit reads no prompt cache) and the recorded
 * reasoning tokens (part of the output tokens it reports). Before, a hit filled the response from the request
 * with fixed defaults and said `reasoning_tokens: 0`.
 */

const key = () => `sk-resp-envelope-${crypto.randomUUID()}`;
const model = () => `gpt-envelope-${crypto.randomUUID().slice(0, 8)}`;
const toolParam = {
  type: "function" as const,
  name: "get_order",
  description: "Look up an order.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  strict: null,
};

/** A completed response as the API sends it for a reasoning model's text answer. */
function upstreamResponse(m: string, echo: { prompt_cache_key: string; safety_identifier: string; metadata: Record<string, string> }) {
  return {
    id: "resp_upstream",
    object: "response",
    created_at: 1760000000,
    status: "completed",
    background: false,
    billing: { payer: "developer" },
    completed_at: 1760000004,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: `${m}-2026-01-01`,
    output: [
      { id: "rs_up1", type: "reasoning", summary: [] },
      {
        id: "msg_up1",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Order A-1 is on its way.", annotations: [], logprobs: [] }],
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    prompt_cache_key: echo.prompt_cache_key,
    prompt_cache_retention: null,
    reasoning: { effort: "medium", summary: null },
    safety_identifier: echo.safety_identifier,
    service_tier: "default",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    // The tools as the API normalised them (`strict` defaults to true), not as the request wrote them.
    tools: [{ ...toolParam, strict: true }],
    top_logprobs: 0,
    top_p: 1,
    truncation: "disabled",
    usage: {
      input_tokens: 50,
      input_tokens_details: { cached_tokens: 20 },
      output_tokens: 80,
      output_tokens_details: { reasoning_tokens: 64 },
      total_tokens: 130,
    },
    user: null,
    metadata: echo.metadata,
  };
}

function client(k: string): OpenAI {
  return new OpenAI({ apiKey: k, baseURL: "http://mm.test/v1", maxRetries: 0, fetch: (input, init) => exports.default.fetch(new Request(input, init)) });
}

const recordedEcho = { prompt_cache_key: "recorded-cache-key", safety_identifier: "recorded-user", metadata: { run: "recorded" } };
const hitEcho = { prompt_cache_key: "hit-cache-key", safety_identifier: "hit-user", metadata: { run: "hit" } };

function request(m: string, echo: typeof recordedEcho) {
  return { model: m, store: false, tools: [toolParam], input: [{ role: "user" as const, content: "Where is order A-1?" }], ...echo };
}

/** The response a hit of `request(m, hitEcho)` serves: the recorded one, renewed and with this request's echo fields. */
function expectedHit(m: string) {
  const recorded = upstreamResponse(m, hitEcho);
  const output = recorded.output.map((item) => (item.type === "message" ? { ...item, id: expect.stringMatching(/^msg_mm/) } : item));
  return {
    ...recorded,
    id: expect.stringMatching(/^resp_mm/),
    created_at: expect.any(Number),
    completed_at: expect.any(Number),
    model: m,
    output,
    usage: { ...recorded.usage, input_tokens_details: { cached_tokens: 0 } },
  };
}

const withoutSdk = (response: OpenAI.Responses.Response) => {
  const { output_text: _sdk, ...rest } = response;
  return rest;
};

async function record(k: string, m: string, stream: boolean) {
  const first = request(m, recordedEcho);
  const miss = await withUpstream(
    stream
      ? {
          text: `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", sequence_number: 0, response: upstreamResponse(m, recordedEcho) })}\n\n`,
          contentType: "text/event-stream",
        }
      : { json: upstreamResponse(m, recordedEcho) },
    async () => (await responses({ ...first, stream }, { key: k })).text(),
  );
  expect(miss).toContain("resp_upstream");
  await recordedResponse(first, { key: k });
}

describe("Responses hits serve the recorded response's fields", () => {
  for (const stream of [false, true]) {
    it(`Should serve what the upstream decided, this request's echo fields and the reasoning tokens, JSON and streamed (recorded from ${stream ? "a stream" : "JSON"})`, async () => {
      const k = key();
      const m = model();
      await record(k, m, stream);
      const next = request(m, hitEcho);
      const hit = await client(k).responses.create(next).withResponse();
      expect(hit.response.headers.get("muscle-mem-cache")).toBe("hit");
      expect(withoutSdk(hit.data)).toEqual(expectedHit(m));

      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of await client(k).responses.create({ ...next, stream: true })) events.push(event);
      const completed = events.find((e) => e.type === "response.completed");
      expect(completed?.type === "response.completed" && completed.response).toEqual(expectedHit(m));
      const created = events.find((e) => e.type === "response.created");
      expect(created?.type === "response.created" && created.response).toMatchObject({
        status: "in_progress",
        reasoning: { effort: "medium", summary: null },
        text: { verbosity: "medium" },
        service_tier: "default",
        billing: { payer: "developer" },
        safety_identifier: "hit-user",
        usage: null,
      });
    });
  }

  it("Should say null for the echo fields a request leaves out", async () => {
    const k = key();
    const m = model();
    await record(k, m, false);
    const { prompt_cache_key: _k, safety_identifier: _s, metadata: _m, ...bare } = request(m, hitEcho);
    const hit = await client(k).responses.create(bare);
    expect(hit).toMatchObject({ prompt_cache_key: null, safety_identifier: null, metadata: {}, user: null, reasoning: { effort: "medium" } });
  });

  it("Should carry the fields through an export and an import into another tenant", async () => {
    const k = key();
    const m = model();
    await record(k, m, false);
    const trees = await ok<{ data: Tree[] }>(api("/trees", { token: k }));
    const jsonl = await (await api(`/trees/${trees.data[0].id}/export`, { token: k })).text();
    const other = key();
    expect(await ok(importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }))).toMatchObject({ answers: 1 });
    const hit = await client(other).responses.create(request(m, hitEcho), { headers: { "cache-control": "only-if-cached" } });
    expect(withoutSdk(hit)).toEqual(expectedHit(m));
    // Only a recorded answer carries them, as an object: any other line is a 400.
    const line = JSON.parse(jsonl.trim()) as { input: Array<Record<string, unknown>> };
    const onUser = { ...line, input: [{ ...line.input[0], "muscle-mem:response": {} }, ...line.input.slice(1)] };
    const notObject = { ...line, input: [line.input[0], { ...line.input[1], "muscle-mem:response": "x" }, ...line.input.slice(2)] };
    for (const bad of [onUser, notObject])
      expect((await importFor(key(), { body: JSON.stringify(bad), headers: { "content-type": "application/x-ndjson" } })).status).toBe(400);
  });
});
