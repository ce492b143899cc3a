import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { chat, generations, uniqueModel } from "./helpers";
import { settled } from "./settled";
import { completion, withUpstream } from "./upstream-stub";

async function expectError(res: Response, status: number, code: string): Promise<void> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { message: string; type: string; code: string } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(typeof body.error.type).toBe("string");
}

const storedNodes = async () => (await env.DB.prepare("SELECT COUNT(*) AS n FROM nodes").first<{ n: number }>())?.n ?? 0;

describe("bad input", () => {
  const invalid: Array<[string, unknown]> = [
    ["messages missing", { model: "m" }],
    ["messages not an array", { model: "m", messages: "hi" }],
    ["messages empty", { model: "m", messages: [] }],
    ["model missing", { messages: [{ role: "user", content: "x" }] }],
    ["model not a string", { model: 4, messages: [{ role: "user", content: "x" }] }],
    ["unknown role", { model: "m", messages: [{ role: "wizard", content: "x" }] }],
    ["user content a number", { model: "m", messages: [{ role: "user", content: 42 }] }],
    [
      "tool call without id",
      {
        model: "m",
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", tool_calls: [{ type: "function", function: { name: "f", arguments: "{}" } }] },
        ],
      },
    ],
    [
      "tool result without a matching call",
      {
        model: "m",
        messages: [
          { role: "user", content: "x" },
          { role: "tool", tool_call_id: "call_9", content: "r" },
        ],
      },
    ],
    ["stream not a boolean", { model: "m", stream: "yes", messages: [{ role: "user", content: "x" }] }],
    ["a JSON array body", [1, 2]],
  ];
  for (const [name, body] of invalid) {
    it(`Should answer 400 for ${name} and store nothing`, async () => {
      const before = await storedNodes();
      await expectError(await chat(body), 400, "invalid_request");
      expect(await storedNodes()).toBe(before);
    });
  }

  it("Should answer 400 for malformed JSON", async () => {
    await expectError(await chat("{not json"), 400, "invalid_json");
  });

  it("Should answer 415 for a body that is not JSON", async () => {
    await expectError(await chat("a=b", { headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type");
  });

  it("Should answer 413 for a body over MAX_BODY_BYTES", async () => {
    const huge = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(Number(env.MAX_BODY_BYTES) + 10) }] });
    await expectError(await chat(huge), 413, "body_too_large");
  });

  it("Should answer 400 for a malformed namespace header", async () => {
    await expectError(
      await chat({ model: "m", messages: [{ role: "user", content: "x" }] }, { headers: { "muscle-mem-namespace": "bad name\twith tab" } }),
      400,
      "invalid_request",
    );
  });

  it("Should answer 405 for GET on the chat route", async () => {
    const { exports } = await import("cloudflare:workers");
    await expectError(await exports.default.fetch(new Request("http://mm.test/v1/chat/completions")), 405, "method_not_allowed");
  });
});

describe("upstream failures", () => {
  for (const status of [429, 500, 503]) {
    it(`Should pass an upstream ${status} through faithfully and record nothing`, async () => {
      const model = uniqueModel(`error-${status}`);
      const body = { model, messages: [{ role: "user", content: "x" }] };
      // settled: the decision not to record has been made before only-if-cached asks.
      await settled(async () => {
        const res = await chat(body);
        expect(res.status).toBe(status);
        expect(await res.json()).toEqual({ error: { message: `scripted ${status}`, type: "server_error", code: `upstream_${status}` } });
      });
      const again = await chat(body, { headers: { "cache-control": "only-if-cached" } });
      expect(again.status).toBe(504);
    });
  }

  it("Should never record a stream that was cut before [DONE]", async () => {
    const model = uniqueModel("truncate");
    const body = { model, stream: true, messages: [{ role: "user", content: "x" }] };
    await settled(async () => {
      const res = await chat(body);
      expect(res.headers.get("muscle-mem-cache")).toBe("miss");
      await res.text().catch(() => "");
    });
    expect((await chat(body, { headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
    await (await chat(body)).text().catch(() => "");
    expect(await generations(model)).toBe(2);
  });

  it("Should never record a JSON answer that was cut short", async () => {
    const model = uniqueModel("truncate");
    const body = { model, messages: [{ role: "user", content: "x" }] };
    await settled(async () => (await chat(body)).text());
    expect((await chat(body, { headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
  });

  it("Should relay but never record a 200 that carries both an error and choices", async () => {
    const body = { model: uniqueModel("dirty"), messages: [{ role: "user", content: "x" }] };
    const dirty = { ...(completion({ role: "assistant", content: "partial" }) as object), error: { message: "overloaded mid-answer" } };
    await settled(async () => {
      const res = await withUpstream({ json: dirty }, () => chat(body));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { error?: unknown }).error).toBeDefined();
    });
    expect((await chat(body, { headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
  });

  it("Should never record a JSON answer whose numbers JSON.parse cannot hold exactly", async () => {
    const body = { model: uniqueModel("inexact"), messages: [{ role: "user", content: "x" }] };
    const text = JSON.stringify(completion({ role: "assistant", content: "ok", score: 1 })).replace('"score":1', '"score":12345678901234567893');
    await settled(async () => (await withUpstream({ text }, () => chat(body))).arrayBuffer());
    expect((await chat(body, { headers: { "cache-control": "only-if-cached" } })).status).toBe(504);
  });
});
