import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { tenantOf } from "../../src/core/hash";
import { forgetAccepted, keyClock } from "../../src/engine/key-freshness";
import { api, importFor, newKey, ok, type Tree } from "./api-helpers";
import { geminiGenerations } from "./gemini.support";
import { chat, generations, uniqueModel } from "./helpers";
import { settled } from "./settled";

const COMPAT = "http://mm.test/v1beta/openai";
const GEMINI_BASE = (env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL;

/** POSTs a chat body to Gemini's OpenAI-compatible route with the key as the `openai` clients send it. */
function compat(body: unknown, key: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(
    new Request(`${COMPAT}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    }),
  );
}

/** The `openai` package pointed at the Worker's Gemini-compat base; records each response's cache outcome. */
function client(key: string, outcomes: string[]): OpenAI {
  return new OpenAI({
    apiKey: key,
    baseURL: COMPAT,
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

/** The refund desk through `chat.completions.create` (or `stream: true`, its chunks assembled by the package's `stream` helper). */
async function refundRun(openai: OpenAI, model: string, stream: boolean): Promise<{ final: string; calls: string[] }> {
  const history: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Please refund order #G-7." }];
  const calls: string[] = [];
  for (let turn = 0; turn < 6; turn++) {
    const body = { model, messages: history, tools };
    const completion = stream ? await openai.chat.completions.stream(body).finalChatCompletion() : await openai.chat.completions.create(body);
    const message = completion.choices[0].message;
    history.push({ role: "assistant", content: message.content, ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}) });
    if (!message.tool_calls?.length) return { final: message.content ?? "", calls };
    for (const call of message.tool_calls) {
      if (call.type !== "function") continue;
      calls.push(`${call.function.name} ${call.function.arguments}`);
      const args = JSON.parse(call.function.arguments) as { order_id: string };
      const output =
        call.function.name === "get_order" ? { order_id: args.order_id, status: "delivered", amount: 42.5 } : { order_id: args.order_id, refunded: true };
      history.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(output) });
    }
  }
  throw new Error("the agent did not finish");
}

/** The Worker under `vars` on top of the test bindings, its background work awaited. */
async function call(request: Request, vars: Record<string, string>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

function compatRequest(body: unknown, headers: Record<string, string>): Request {
  return new Request(`${COMPAT}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

afterEach(() => {
  keyClock.now = () => Date.now();
  forgetAccepted();
});

describe("Gemini's OpenAI-compatible endpoint (POST /v1beta/openai/chat/completions) is a cached chat route", () => {
  it("Should record a miss from GEMINI_BASE_URL and serve it as a hit, JSON and streamed, in the openai client's shapes", async () => {
    const key = newKey();
    const model = uniqueModel("echo-compat");
    const outcomes: string[] = [];
    const openai = client(key, outcomes);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "hello gemini" }];
    const first = await settled(() => openai.chat.completions.create({ model, messages }));
    expect(first.object).toBe("chat.completion");
    expect(first.choices[0].message.content).toBe("echo: hello gemini");
    const again = await openai.chat.completions.create({ model, messages });
    expect(again.choices[0].message).toMatchObject({ role: "assistant", content: "echo: hello gemini" });
    expect(again.choices[0].finish_reason).toBe("stop");
    const streamed = await openai.chat.completions.create({ model, messages, stream: true });
    let text = "";
    for await (const chunk of streamed) {
      expect(chunk.object).toBe("chat.completion.chunk");
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(text).toBe("echo: hello gemini");
    expect(outcomes).toEqual(["miss", "hit", "hit"]);
    // One generation, at the Gemini upstream; none at OpenAI's.
    expect(await geminiGenerations(model)).toBe(1);
    expect(await generations(model)).toBe(0);
  });

  it("Should record a streamed miss and serve it to a JSON request", async () => {
    const key = newKey();
    const model = uniqueModel("echo-compat");
    const outcomes: string[] = [];
    const openai = client(key, outcomes);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "stream first" }];
    const text = await settled(async () => {
      let out = "";
      for await (const chunk of await openai.chat.completions.create({ model, messages, stream: true })) out += chunk.choices[0]?.delta.content ?? "";
      return out;
    });
    expect(text).toBe("echo: stream first");
    const json = await openai.chat.completions.create({ model, messages });
    expect(json.choices[0].message.content).toBe("echo: stream first");
    expect(outcomes).toEqual(["miss", "hit"]);
    expect(await geminiGenerations(model)).toBe(1);
  });

  it("Should run a tool-call round trip: misses on the first run, hits with the same calls on the second (create, then streamed)", async () => {
    const key = newKey();
    const model = uniqueModel("desk-compat");
    const recording: string[] = [];
    const first = await settled(() => refundRun(client(key, recording), model, false));
    expect(recording).toEqual(["miss", "miss", "miss"]);
    expect(first.calls).toEqual(['get_order {"order_id":"G-7"}', 'refund {"order_id":"G-7","amount":42.5}']);
    expect(first.final).toBe("Done: order G-7 was refunded.");
    const serving: string[] = [];
    const second = await refundRun(client(key, serving), model, true);
    expect(serving).toEqual(["hit", "hit", "hit"]);
    expect(second).toEqual(first);
    expect(await geminiGenerations(model)).toBe(3);
  });

  it("Should record a tool call's thought signature (extra_content) and serve it back, JSON and streamed; the echoed call walks the path", async () => {
    const key = newKey();
    const model = uniqueModel("sig-compat");
    const signed = { extra_content: { google: { thought_signature: "c2lnLTE=" } } };
    const first: unknown[] = [{ role: "user", content: "Refund order #S-1." }];
    const miss = await settled(
      async () => (await (await compat({ model, messages: first }, key)).json()) as { choices: Array<{ message: { tool_calls: unknown[] } }> },
    );
    expect(miss.choices[0].message.tool_calls[0]).toMatchObject(signed);
    const hit = await compat({ model, messages: first }, key);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    const served = ((await hit.json()) as typeof miss).choices[0].message.tool_calls[0] as { id: string; function: { arguments: string } };
    expect(served).toMatchObject({ ...signed, type: "function", function: { name: "get_order", arguments: '{"order_id":"S-1"}' } });
    const streamed = await (await compat({ model, messages: first, stream: true }, key)).text();
    expect(streamed).toContain('"extra_content":{"google":{"thought_signature":"c2lnLTE="}}');
    // The agent sends the signed call back with its result: keyed with the signature, recorded, then served.
    const second = [
      ...first,
      { role: "assistant", content: null, tool_calls: [served] },
      { role: "tool", tool_call_id: served.id, content: '{"order_id":"S-1","status":"shipped"}' },
    ];
    await settled(async () => void (await (await compat({ model, messages: second }, key)).arrayBuffer()));
    const again = await compat({ model, messages: second }, key);
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    expect(((await again.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe(
      "Order S-1 is shipped, so it cannot be refunded yet.",
    );
    // Without the signature it is another request (the model reads it): not served the signed path's answer.
    const unsigned = [
      ...first,
      { role: "assistant", content: null, tool_calls: [{ id: served.id, type: "function", function: { name: "get_order", arguments: '{"order_id":"S-1"}' } }] },
      second[2],
    ];
    expect((await compat({ model, messages: unsigned }, key, { "cache-control": "only-if-cached" })).status).toBe(504);
    expect(await geminiGenerations(model)).toBe(2);
  });

  it("Should keep the Gemini-compat recordings and the OpenAI upstream's apart for the same body and key, both ways", async () => {
    const key = newKey();
    const model = uniqueModel("echo-apart");
    const body = { model, messages: [{ role: "user", content: "which upstream?" }] };
    await settled(async () => void (await (await compat(body, key)).arrayBuffer()));
    expect((await compat(body, key, { "cache-control": "only-if-cached" })).status).toBe(200);
    // The same body and key on OpenAI's route: not served Gemini's answer.
    const openaiOnly = await chat(body, { key, headers: { "cache-control": "only-if-cached" } });
    expect(openaiOnly.status).toBe(504);
    expect(openaiOnly.headers.get("muscle-mem-cache")).toBe("miss");
    // Recorded there (from the OpenAI upstream), it is still not served on Gemini's route, and the reverse.
    const other = uniqueModel("echo-apart");
    const reverse = { model: other, messages: [{ role: "user", content: "which upstream?" }] };
    await settled(async () => void (await (await chat(reverse, { key })).arrayBuffer()));
    expect((await chat(reverse, { key, headers: { "cache-control": "only-if-cached" } })).status).toBe(200);
    const geminiOnly = await compat(reverse, key, { "cache-control": "only-if-cached" });
    expect(geminiOnly.status).toBe(504);
    expect(await generations(other)).toBe(1);
    expect(await geminiGenerations(other)).toBe(0);
    expect(await geminiGenerations(model)).toBe(1);
    expect(await generations(model)).toBe(0);
  });

  it("Should export a compat tree as chat lines that keep its upstream, and import them into a tenant served on the compat route only", async () => {
    const key = newKey();
    const model = uniqueModel("echo-export");
    const body = { model, messages: [{ role: "user", content: "carry me" }] };
    await settled(async () => void (await (await compat(body, key)).arrayBuffer()));
    const trees = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(trees.data).toHaveLength(1);
    const line = await (await api(`/trees/${trees.data[0].id}/export`, { token: key })).text();
    expect(JSON.parse(line.trim().split("\n")[0]).params).toMatchObject({ "muscle-mem:upstream": "GEMINI_BASE_URL/v1beta/openai" });
    const other = newKey();
    await ok(importFor(other, { body: line, headers: { "content-type": "application/x-ndjson" } }));
    const served = await compat(body, other, { "cache-control": "only-if-cached" });
    expect(served.status).toBe(200);
    expect(((await served.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe("echo: carry me");
    expect((await chat(body, { key: other, headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
    // A live body cannot name the upstream itself: the field is reserved, the request bypassed.
    const forged = await chat({ ...body, "muscle-mem:upstream": "GEMINI_BASE_URL/v1beta/openai" }, { key: other });
    expect(forged.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(await geminiGenerations(model)).toBe(1);
  });

  it("Should make two Gemini keys two tenants: one key's recording is not served to the other", async () => {
    const model = uniqueModel("echo-tenant");
    const body = { model, messages: [{ role: "user", content: "mine" }] };
    const a = newKey();
    await settled(async () => void (await (await compat(body, a)).arrayBuffer()));
    expect((await compat(body, a, { "cache-control": "only-if-cached" })).headers.get("muscle-mem-cache")).toBe("hit");
    const b = await compat(body, newKey(), { "cache-control": "only-if-cached" });
    expect(b.status).toBe(504);
    // In OpenAI's envelope, as the openai clients read it.
    expect(((await b.json()) as { error: { code: string } }).error.code).toBe("not_cached");
  });

  it("Should re-check a stale key at the compat layer's model list, with the Authorization the client sent", async () => {
    let now = 3_000_000_000;
    keyClock.now = () => now;
    forgetAccepted();
    const key = newKey();
    const model = uniqueModel("echo-fresh");
    const body = { model, messages: [{ role: "user", content: "still yours?" }] };
    await settled(async () => void (await (await compat(body, key)).arrayBuffer()));
    now += 900_000;
    forgetAccepted();
    const hit = await compat(body, key);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    const lists = (await (await fetch(`${GEMINI_BASE}/__model-lists?key=${encodeURIComponent(key)}`)).json()) as Array<{ path: string; via: string }>;
    expect(lists).toEqual([{ path: "/v1beta/openai/models", via: "authorization", anthropicVersion: null }]);
  });

  it("Should relay the compat layer's other calls (model list, embeddings) to GEMINI_BASE_URL uncached, and answer 405 to a GET on the chat route", async () => {
    const key = newKey();
    const models = await exports.default.fetch(new Request(`${COMPAT}/models`, { headers: { authorization: `Bearer ${key}` } }));
    expect(models.status).toBe(200);
    expect(models.headers.get("muscle-mem-cache")).not.toBe("hit");
    const embeddings = await exports.default.fetch(
      new Request(`${COMPAT}/embeddings`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ model: "e", input: "x" }) }),
    );
    // The scripted Gemini server's own 404: it reached GEMINI_BASE_URL unchanged.
    expect(embeddings.status).toBe(404);
    expect(((await embeddings.json()) as { error: { message: string } }).error.message).toBe("no route POST /v1beta/openai/embeddings");
    const get = await exports.default.fetch(new Request(`${COMPAT}/chat/completions`, { headers: { authorization: `Bearer ${key}` } }));
    expect(get.status).toBe(405);
  });

  it("Should gate the route like the other model routes: WORKER_TOKEN and ALLOWED_TENANTS, before the upstream", async () => {
    const model = uniqueModel("echo-gate");
    const body = { model, messages: [{ role: "user", content: "let me in" }] };
    const token = { WORKER_TOKEN: "worker-secret" };
    const none = await call(compatRequest(body, { authorization: `Bearer ${newKey()}` }), token);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { param: string } }).error.param).toBe("muscle-mem-authorization");
    expect(await geminiGenerations(model)).toBe(0);
    const passed = await call(compatRequest(body, { authorization: `Bearer ${newKey()}`, "muscle-mem-authorization": "Bearer worker-secret" }), token);
    expect(passed.status).toBe(200);
    expect(await geminiGenerations(model)).toBe(1);
    const allowed = newKey();
    const list = { ALLOWED_TENANTS: tenantOf(`Bearer ${allowed}`) };
    expect((await call(compatRequest(body, { authorization: `Bearer ${newKey()}` }), list)).status).toBe(403);
    expect((await call(compatRequest(body, {}), list)).status).toBe(401);
    expect((await call(compatRequest(body, { authorization: `Bearer ${allowed}` }), list)).status).toBe(200);
  });
});
