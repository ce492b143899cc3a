import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANTHROPIC_REFUND_TOOLS,
  anthropicRefundDesk,
  startScriptedAnthropic,
  type AnthropicBody,
  type ScriptedAnthropic,
} from "../../tools/scripted-anthropic";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { trackingFetch, waitRecorded, type Exchange } from "./support-compat";

/**
 * What `@anthropic-ai/sdk` does beyond `messages.create()`, through `wrangler dev`: the raw response and its
 * headers, the `messages.stream()` helper's events and final message, and its retries of an overloaded (529)
 * upstream, whose error is never recorded. Each check: a miss, then a hit with the same content (the blocks
 * as the model wrote them, but the `tool_use` ids a hit renews).
 */
let model: ScriptedAnthropic;
let dev: WranglerDev;
let overloaded = 0;
const seen: AnthropicBody[] = [];
beforeAll(async () => {
  model = await startScriptedAnthropic({
    script: (body) => {
      seen.push(body);
      if (overloaded > 0) {
        overloaded--;
        return { status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } };
      }
      return anthropicRefundDesk(body);
    },
  });
  dev = await startWranglerDev({ vars: { ANTHROPIC_BASE_URL: model.url, UPSTREAM_BASE_URL: model.url } });
});
afterAll(async () => {
  await dev?.stop();
  await model?.close();
});

const freshKey = () => `sk-ant-clients-${crypto.randomUUID().slice(0, 12)}`;
const client = (key: string, log: Exchange[], maxRetries = 0) => new Anthropic({ apiKey: key, baseURL: dev.url, maxRetries, fetch: trackingFetch(log) });
const TOOLS: Anthropic.Tool[] = ANTHROPIC_REFUND_TOOLS.map((t) => ({ ...t, input_schema: { ...t.input_schema, required: [...t.input_schema.required] } }));
const params = (order: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model: "claude-clients",
  max_tokens: 256,
  tools: TOOLS,
  messages: [{ role: "user", content: `Please refund order #${order}.` }],
});
const calls = (order: string) => seen.filter((b) => JSON.stringify(b.messages).includes(`#${order}.`)).length;
/** The status of `exchange` re-sent with only-if-cached: 200 from the tree, 504 when nothing is recorded. */
async function cachedStatus(exchange: Exchange): Promise<number> {
  const res = await fetch(exchange.url, { method: "POST", headers: { ...exchange.headers, "cache-control": "only-if-cached" }, body: exchange.body });
  await res.arrayBuffer();
  return res.status;
}
/** A message's blocks without the ids a hit renews. */
const blocks = (message: Anthropic.Message) => message.content.map((b) => (b.type === "tool_use" ? { ...b, id: "renewed" } : b));

describe("@anthropic-ai/sdk beyond messages.create(), through wrangler dev", () => {
  it("withResponse() and asResponse(): the cache outcome in the headers, the same blocks from the tree", async () => {
    const key = freshKey();
    const log: Exchange[] = [];
    const miss = await client(key, log).messages.create(params("K-1")).withResponse();
    expect(miss.response.headers.get("muscle-mem-cache")).toBe("miss");
    expect(miss.data.content.map((b) => b.type)).toEqual(["text", "tool_use"]);
    await waitRecorded(log[0]);

    const raw = await client(key, log).messages.create(params("K-1")).asResponse();
    expect(raw.headers.get("muscle-mem-cache")).toBe("hit");
    const hit = (await raw.json()) as Anthropic.Message;
    expect(blocks(hit)).toEqual(blocks(miss.data));
    expect(hit.stop_reason).toBe(miss.data.stop_reason);
    expect(calls("K-1")).toBe(1);
  });

  it("messages.stream(): the text and input-JSON events and finalMessage() are the same on the hit", async () => {
    const key = freshKey();
    const log: Exchange[] = [];
    const run = async () => {
      const stream = client(key, log).messages.stream(params("K-2"));
      let text = "";
      let json = "";
      stream.on("text", (delta) => {
        text += delta;
      });
      stream.on("inputJson", (delta) => {
        json += delta;
      });
      const final = await stream.finalMessage();
      return { text, json, blocks: blocks(final), stop: final.stop_reason };
    };
    const miss = await run();
    expect(miss.text).toBe("Let me look that order up.");
    expect(JSON.parse(miss.json)).toEqual({ order_id: "K-2" });
    await waitRecorded(log[0]);
    const hit = await run();
    expect(hit).toEqual(miss);
    expect(log.map((e) => e.outcome)).toEqual(["miss", "hit"]);
    expect(calls("K-2")).toBe(1);
  });

  it("an overloaded (529) upstream is relayed and never recorded; the SDK's retry is a miss that is recorded, then hits", async () => {
    const key = freshKey();
    const log: Exchange[] = [];
    overloaded = 1;
    const error = await client(key, log)
      .messages.create(params("K-3"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect(await cachedStatus(log[0])).toBe(504);

    overloaded = 1;
    const retried = await client(key, log, 2).messages.create(params("K-3")).withResponse();
    expect(retried.response.headers.get("muscle-mem-cache")).toBe("miss");
    // The first call, then the retried call's two attempts: the 529s reached the client as they were.
    expect(log.map((e) => e.outcome)).toEqual(["miss", "miss", "miss"]);
    expect(log.map((e) => e.headers["x-stainless-retry-count"])).toEqual(["0", "0", "1"]);
    expect(calls("K-3")).toBe(3);
    await waitRecorded(log[2]);

    const hit = await client(key, log).messages.create(params("K-3")).withResponse();
    expect(hit.response.headers.get("muscle-mem-cache")).toBe("hit");
    expect(blocks(hit.data)).toEqual(blocks(retried.data));
    expect(calls("K-3")).toBe(3);
  });
});
