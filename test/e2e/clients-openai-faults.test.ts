import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import type OpenAI from "openai";
import { APIConnectionTimeoutError, APIError, AzureOpenAI } from "openai";
import { describe, expect, it } from "vitest";
import { ask, eventually, freshKey, useClientsWorker } from "./clients-worker";

/**
 * The openai npm client's own machinery through `wrangler dev`: retries of an upstream 5xx (the error is
 * never recorded, the retry is), a client timeout (the answer lands and is recorded), an abort mid-stream,
 * also with @anthropic-ai/sdk and @google/genai (nothing recorded, the upstream stream cancelled, the next call goes to the
 * model), its `x-stainless-*` and `Idempotency-Key` headers (relayed, not keyed), a default query (Azure's
 * `api-version`: relayed and keyed) and the AzureOpenAI client's deployment path (passed through).
 */
const worker = useClientsWorker((url) => ({ UPSTREAM_BASE_URL: url, ANTHROPIC_BASE_URL: url, GEMINI_BASE_URL: url.replace(/\/v1$/, "") }));
const { client, callsTo, recorded } = worker;

/** Sends `body` with the openai client and returns the cache outcome and the answer's text. */
async function chat(openai: OpenAI, body: OpenAI.ChatCompletionCreateParamsNonStreaming, options?: OpenAI.RequestOptions) {
  const { data, response } = await openai.chat.completions.create(body, options).withResponse();
  return { outcome: response.headers.get("muscle-mem-cache"), content: data.choices[0].message.content };
}

describe("the openai npm client's retries, timeouts, aborts and headers, through wrangler dev", () => {
  it("an upstream 5xx is relayed and never recorded; the client's retry is a miss that is recorded, then hits", async () => {
    const key = freshKey();
    const body = { model: "gpt-retry", messages: ask("retry me") };
    worker.upstream.failNext(1, 503);
    const error = await client(key)
      .chat.completions.create(body)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(503);
    expect(await recorded(key, "chat/completions", body)).toBe(false);

    worker.upstream.failNext(1, 500);
    const retried = await chat(client(key, { maxRetries: 2 }), body);
    expect(retried.outcome).toBe("miss");
    const calls = callsTo("gpt-retry");
    expect(calls.map((c) => c.end)).toEqual(["failed", "failed", "answered"]);
    // The retry carried the client's retry count to the model: relayed, not keyed.
    expect(calls.map((c) => c.headers["x-stainless-retry-count"])).toEqual(["0", "0", "1"]);
    await eventually(() => recorded(key, "chat/completions", body), "the retried answer to be recorded");

    const hit = await chat(client(key), body);
    expect(hit).toEqual({ outcome: "hit", content: retried.content });
    expect(callsTo("gpt-retry")).toHaveLength(3);
  });

  it("a client timeout before the answer: the Worker, never told, records the model's whole answer, which the next call hits", async () => {
    // Under wrangler dev a client that hangs up before any byte of the answer is not seen by the Worker (no
    // request signal reaches it, and it writes nothing to fail on): the upstream answers in full and the
    // answer is recorded. That answer is the model's own to exactly this request, so a hit on it is right;
    // docs/reliability.md says so. (A client that aborts once bytes flow is the next test.)
    const key = freshKey();
    const body = { model: "late-timeout", messages: ask("answer late") };
    const error = await client(key)
      .chat.completions.create(body, { timeout: 200 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    // The Worker goes on without the client: its call reaches the model (on a loaded machine, perhaps only now).
    await eventually(() => callsTo("late-timeout").length === 1, "the call to reach the model");
    expect(callsTo("late-timeout").map((c) => c.end)).toEqual(["pending"]);
    worker.upstream.release("late-timeout");
    await eventually(() => callsTo("late-timeout")[0].end === "answered", "the held answer to be sent");
    await eventually(() => recorded(key, "chat/completions", body), "the answer to be recorded");

    const next = await chat(client(key), body);
    expect(next).toEqual({ outcome: "hit", content: expect.stringContaining("Echo: answer late") });
    expect(callsTo("late-timeout")).toHaveLength(1);
  });

  it("an AbortController mid-stream: the upstream stream cancelled, nothing recorded, the next call goes to the model", async () => {
    const key = freshKey();
    const body = { model: "slow-abort", messages: ask("stream slowly"), stream: true as const };
    const controller = new AbortController();
    const stream = await client(key).chat.completions.create(body, { signal: controller.signal });
    let first = "";
    for await (const chunk of stream) {
      first += chunk.choices[0]?.delta.content ?? "";
      // The openai client's Stream ends the loop quietly once its caller aborts (no APIUserAbortError).
      if (first) controller.abort();
    }
    expect(controller.signal.aborted).toBe(true);
    expect(first.length).toBeGreaterThan(0);
    // The model goes on; the Worker's next write finds the client gone and cancels the upstream stream.
    worker.upstream.release("slow-abort");
    await eventually(() => callsTo("slow-abort")[0]?.end === "cancelled", "the Worker to cancel the upstream stream");
    expect(await recorded(key, "chat/completions", body)).toBe(false);

    const read = async () => {
      const { data, response } = await client(key).chat.completions.create(body).withResponse();
      let text = "";
      for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? "";
      return { outcome: response.headers.get("muscle-mem-cache"), text };
    };
    const next = await read();
    expect(next.outcome).toBe("miss");
    expect(next.text.startsWith(first)).toBe(true);
    await eventually(() => recorded(key, "chat/completions", body), "the whole stream to be recorded");
    expect(await read()).toEqual({ outcome: "hit", text: next.text });
    expect(callsTo("slow-abort").map((c) => c.end)).toEqual(["cancelled", "answered"]);
  });

  it("@anthropic-ai/sdk's stream.abort() mid-stream: the upstream stream cancelled, nothing recorded, the next call goes to the model", async () => {
    const key = freshKey();
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: "slow-claude-abort",
      max_tokens: 64,
      messages: [{ role: "user", content: "stream slowly" }],
    };
    const anthropic = new Anthropic({ apiKey: key, baseURL: worker.dev.url, maxRetries: 0 });
    const first = anthropic.messages.stream(params);
    const firstText = await new Promise<string>((resolve) => first.on("text", (delta) => resolve(delta)));
    first.abort();
    await first.done().catch(() => undefined);
    expect(firstText.length).toBeGreaterThan(0);
    worker.upstream.release("slow-claude-abort");
    await eventually(() => callsTo("slow-claude-abort")[0]?.end === "cancelled", "the Worker to cancel the upstream stream");

    const read = async () => {
      const stream = anthropic.messages.stream(params);
      const message = await stream.finalMessage();
      const { response } = await stream.withResponse();
      return { outcome: response.headers.get("muscle-mem-cache"), text: message.content.map((b) => (b.type === "text" ? b.text : "")).join("") };
    };
    const next = await read();
    expect(next.outcome).toBe("miss");
    expect(next.text.startsWith(firstText)).toBe(true);
    expect(callsTo("slow-claude-abort").map((c) => c.end)).toEqual(["cancelled", "answered"]);
    await eventually(async () => (await read()).outcome === "hit", "the whole stream to be recorded and served");
    expect(callsTo("slow-claude-abort")).toHaveLength(2);
  });

  it("@google/genai's abortSignal mid-stream: the upstream stream cancelled, nothing recorded, the next call goes to the model", async () => {
    const model = "slow-gemini-abort";
    const ai = new GoogleGenAI({ apiKey: freshKey(), httpOptions: { baseUrl: worker.dev.url } });
    const read = async (signal?: AbortSignal) => {
      let text = "";
      const stream = await ai.models.generateContentStream({ model, contents: "stream slowly", config: { abortSignal: signal } });
      for await (const chunk of stream) {
        text += chunk.text ?? "";
        if (signal && text) break;
      }
      return text;
    };
    const controller = new AbortController();
    const first = await read(controller.signal);
    controller.abort();
    expect(first.length).toBeGreaterThan(0);
    worker.upstream.release(model);
    await eventually(() => callsTo(model)[0]?.end === "cancelled", "the Worker to cancel the upstream stream");

    const next = await read();
    expect(next.startsWith(first)).toBe(true);
    expect(callsTo(model).map((c) => c.end)).toEqual(["cancelled", "answered"]);
    // The whole answer is recorded: the same call again is served without the model.
    await eventually(async () => (await read()) === next && callsTo(model).length === 2, "the stream to be served from the tree");
    expect(callsTo(model)).toHaveLength(2);
  });

  it("x-stainless-* and Idempotency-Key reach the model on a miss and are not keyed: another value hits", async () => {
    const key = freshKey();
    const body = { model: "gpt-headers", messages: ask("which headers?") };
    const miss = await chat(client(key), body, { headers: { "Idempotency-Key": "idem-1" } });
    expect(miss.outcome).toBe("miss");
    const [sent] = callsTo("gpt-headers");
    expect(sent.headers["idempotency-key"]).toBe("idem-1");
    expect(sent.headers["x-stainless-lang"]).toBe("js");
    expect(sent.headers["x-stainless-package-version"]).toMatch(/^\d+\.\d+\.\d+/);
    expect(sent.headers["x-stainless-retry-count"]).toBe("0");
    await eventually(() => recorded(key, "chat/completions", body), "the answer to be recorded");

    const other = client(key, { defaultHeaders: { "X-Stainless-OS": "Plan9", "X-Stainless-Runtime-Version": "v0.0.1" } });
    const hit = await chat(other, body, { headers: { "Idempotency-Key": "idem-2" } });
    expect(hit).toEqual({ outcome: "hit", content: miss.content });
    expect(callsTo("gpt-headers")).toHaveLength(1);
  });

  it("defaultQuery (Azure's api-version) reaches the model and is keyed: the same version hits, another misses", async () => {
    const key = freshKey();
    const body = { model: "gpt-azure-query", messages: ask("which api version?") };
    const azure = (version: string) => client(key, { defaultQuery: { "api-version": version } });
    const first = await chat(azure("2024-10-21"), body);
    expect(first.outcome).toBe("miss");
    expect(callsTo("gpt-azure-query").map((c) => c.search)).toEqual(["?api-version=2024-10-21"]);
    await eventually(() => recorded(key, "chat/completions", body, "?api-version=2024-10-21"), "the answer to be recorded");
    expect(await recorded(key, "chat/completions", body)).toBe(false);

    expect(await chat(azure("2024-10-21"), body)).toEqual({ outcome: "hit", content: first.content });
    const other = await chat(azure("2025-04-01-preview"), body);
    expect(other.outcome).toBe("miss");
    expect(callsTo("gpt-azure-query").map((c) => c.search)).toEqual(["?api-version=2024-10-21", "?api-version=2025-04-01-preview"]);
  });

  it("the AzureOpenAI client's deployment path is passed through, never cached: both calls reach the model", async () => {
    const azure = new AzureOpenAI({ apiKey: freshKey(), baseURL: `${worker.dev.url}/v1`, apiVersion: "2024-10-21", maxRetries: 0 });
    const body = { model: "gpt-azure-deployment", messages: ask("through a deployment") };
    const outcomes: Array<string | null> = [];
    for (let i = 0; i < 2; i++) outcomes.push((await azure.chat.completions.create(body).withResponse()).response.headers.get("muscle-mem-cache"));
    expect(outcomes).toEqual(["bypass", "bypass"]);
    const sent = callsTo("gpt-azure-deployment");
    expect(sent.map((c) => `${c.path}${c.search}`)).toEqual(Array(2).fill("/v1/deployments/gpt-azure-deployment/chat/completions?api-version=2024-10-21"));
  });
});
