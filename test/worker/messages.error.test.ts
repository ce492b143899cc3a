import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { generations, uniqueModel } from "./helpers";
import { postMessages, refundTools } from "./messages.support";

const ask = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 64,
  tools: refundTools,
  messages: [{ role: "user", content: "Refund order #A-1 please" }],
  ...extra,
});

/** Asks twice more with only-if-cached: a 504 proves that nothing was recorded. */
async function notRecorded(body: unknown, key?: string): Promise<void> {
  const res = await postMessages(body, { key, headers: { "cache-control": "only-if-cached" } });
  expect(res.status).toBe(504);
  expect(res.headers.get("muscle-mem-error")).toBe("not_cached");
  expect(res.headers.get("x-should-retry")).toBe("false");
  expect(await res.json()).toEqual({
    type: "error",
    error: { type: "timeout_error", message: "No cached answer for this request (cache-control: only-if-cached)." },
  });
}

describe("POST /v1/messages errors", () => {
  it("Should answer malformed JSON with a 400 in the error envelope", async () => {
    const res = await postMessages("{not json");
    expect(res.status).toBe(400);
    // Anthropic's envelope (what the SDK reads), the Worker's code in a header.
    expect(await res.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: "The request body is not valid JSON." } });
    expect(res.headers.get("muscle-mem-error")).toBe("invalid_json");
  });

  it("Should reject a body without max_tokens with the parameter named", async () => {
    const res = await postMessages({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining("max_tokens") } });
    expect(res.headers.get("muscle-mem-error")).toBe("invalid_request");
  });

  it("Should pass a tool_result without its tool_use to the model (it may live in a server-side thread)", async () => {
    const model = uniqueModel("echo");
    const orphan = { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "{}" }] };
    const res = await postMessages(ask(model, { messages: [orphan] }));
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    const thread = await postMessages(ask(model, { thread: { type: "continue", previous_message_id: "msg_1" } }));
    expect(thread.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(await generations(model)).toBe(2);
  });

  it("Should answer GET with 405", async () => {
    const res = await exports.default.fetch(new Request("http://mm.test/v1/messages"));
    expect(res.status).toBe(405);
  });

  it("Should relay an upstream error and record nothing", async () => {
    const model = uniqueModel("error-529");
    const res = await postMessages(ask(model));
    expect(res.status).toBe(529);
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "api_error" } });
    await notRecorded(ask(model));
  });

  it("Should record nothing from a stream that stops before message_stop", async () => {
    const model = uniqueModel("truncate");
    const res = await postMessages(ask(model, { stream: true }));
    await res.text().catch(() => "");
    await notRecorded(ask(model));
    expect(await generations(model)).toBe(1);
  });

  it("Should answer only-if-cached with 504 on a miss without asking the model", async () => {
    const model = uniqueModel("a");
    await notRecorded(ask(model));
    expect(await generations(model)).toBe(0);
  });

  it("Should ask the model and record nothing with cache-control: no-store", async () => {
    const model = uniqueModel("a");
    const res = await postMessages(ask(model), { headers: { "cache-control": "no-store" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    await res.arrayBuffer();
    await notRecorded(ask(model));
  });

  it("Should bypass non-text content (extended thinking is cached: messages.thinking.test.ts)", async () => {
    const model = uniqueModel("echo");
    const thinking = await postMessages(ask(model, { thinking: { type: "enabled", budget_tokens: 1024 } }));
    expect(thinking.headers.get("muscle-mem-cache")).toBe("miss");
    await thinking.arrayBuffer();
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
    const withImage = await postMessages(ask(model, { messages: [{ role: "user", content: [image, { type: "text", text: "what is this?" }] }] }));
    expect(withImage.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(await generations(model)).toBe(2);
  });
});
