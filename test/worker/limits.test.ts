import { tenantOf } from "../../src/core/hash";
import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keyRequest } from "../../src/providers/chat/key";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES } from "../../src/core/limits";
import { parseConfig } from "../../src/config";
import { chatRequest } from "../../src/core/messages";
import type { RequestLogLine } from "../../src/observability/log";
import { MAX_JSON_DEPTH } from "../../src/core/exact-json";
import { chat, generations, recorded, uniqueModel } from "./helpers";
import { postMessages } from "./messages.support";

let printed: string[] = [];

beforeEach(() => {
  printed = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(" ")));
});

afterEach(() => {
  vi.restoreAllMocks();
});

function logLine(requestId: string): RequestLogLine | undefined {
  return printed
    .filter((p) => p.startsWith("{"))
    .map((p) => JSON.parse(p) as RequestLogLine)
    .find((l) => l.event === "request" && l.request_id === requestId);
}

const tool = (i: number) => ({
  type: "function",
  function: {
    name: `tool_${i}`,
    description: `Tool number ${i}: looks things up in system ${i} and returns a JSON record.`,
    parameters: { type: "object", properties: { id: { type: "string", description: "The record id" }, limit: { type: "integer" } }, required: ["id"] },
  },
});

/** A conversation of `n` messages ending with a user turn. */
function conversation(n: number): Array<{ role: string; content: string }> {
  return Array.from({ length: n }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: `turn ${i}: ${i % 2 === 0 ? "what about order" : "noted"} #A-${i}`,
  }));
}

describe("large requests (docs/limits.md)", () => {
  it("Should bypass and count a 1 MB system prompt, answer the agent, and store nothing", async () => {
    const model = uniqueModel("big");
    const body = {
      model,
      messages: [
        { role: "system", content: "You are a refund desk. ".repeat(48_000) },
        { role: "user", content: "Refund order #A-1" },
      ],
    };
    expect(JSON.stringify(body).length).toBeGreaterThan(1_000_000);
    for (const id of ["big-1", "big-2"]) {
      const res = await chat(body, { headers: { "x-request-id": id } });
      expect(res.status).toBe(200);
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
      expect(((await res.json()) as { object: string }).object).toBe("chat.completion");
      expect(logLine(id)).toMatchObject({ outcome: "bypass", reason: "message too large", status: 200 });
    }
    expect(await generations(model)).toBe(2);
    const cached = await chat(body, { headers: { "cache-control": "only-if-cached" } });
    expect(cached.status).toBe(504);
  });

  it("Should bypass a 1 MB system prompt on the Messages API too, answer the agent, and store nothing", async () => {
    const body = {
      model: uniqueModel("claude-big"),
      max_tokens: 64,
      system: "You are a refund desk. ".repeat(48_000),
      messages: [{ role: "user", content: "Refund order #A-1" }],
    };
    for (let i = 0; i < 2; i++) {
      const res = await postMessages(body);
      expect(res.status).toBe(200);
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
      expect(((await res.json()) as { type: string }).type).toBe("message");
    }
    const cached = await postMessages(body, { headers: { "cache-control": "only-if-cached" } });
    expect(cached.status).toBe(504);
  });

  it("Should bypass and count a 5 MB base64 image, never an error, and never log its bytes", async () => {
    const model = uniqueModel("img");
    const image = `data:image/png;base64,${"iVBORw0KGgo".repeat(480_000)}`;
    const body = {
      model,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            { type: "image_url", image_url: { url: image } },
          ],
        },
      ],
    };
    const res = await chat(body, { headers: { "x-request-id": "img-1" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    await res.arrayBuffer();
    expect(logLine("img-1")).toMatchObject({ outcome: "bypass", reason: "non-text content part", status: 200 });
    expect(printed.join("\n")).not.toContain("iVBORw0KGgo");
    expect(await generations(model)).toBe(1);
  });

  it("Should store a 500-message conversation as a path and serve it from the tree", async () => {
    const model = uniqueModel("long");
    const body = { model, messages: conversation(499) };
    expect(body.messages).toHaveLength(499);
    const first = await chat(body);
    expect(first.status).toBe(200);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = (await first.json()) as { choices: Array<{ message: unknown }> };
    await recorded(body);
    const second = await chat(body, { headers: { "x-request-id": "long-hit" } });
    expect(second.headers.get("muscle-mem-cache")).toBe("hit");
    const hit = (await second.json()) as { choices: Array<{ message: { content: unknown } }> };
    expect(hit.choices[0].message.content).toEqual((missed.choices[0].message as { content: unknown }).content);
    // A hit's request line is gathered into its tree's `hits` line at LOG_LEVEL=info (observability.test.ts).
    expect(second.headers.get("muscle-mem-node")).toMatch(/^[0-9a-f]{16,}$/);
    // The 500th message: the answer, then one more user turn extends the same path by two nodes.
    const next = {
      model,
      messages: [...conversation(499), { role: "assistant", content: hit.choices[0].message.content }, { role: "user", content: "and then?" }],
    };
    const third = await chat(next);
    expect(third.status).toBe(200);
    await third.arrayBuffer();
    expect(await generations(model)).toBe(2);
  });

  it("Should store a 200-tool schema in the frame and serve hits for it", async () => {
    const model = uniqueModel("tools");
    const body = { model, tools: Array.from({ length: 200 }, (_, i) => tool(i)), messages: [{ role: "user", content: "Refund order #A-9" }] };
    expect(JSON.stringify(body.tools).length).toBeGreaterThan(50_000);
    const first = await chat(body);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.arrayBuffer();
    await recorded(body);
    const again = await chat({ ...body, tools: [...body.tools] });
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    await again.arrayBuffer();
    expect(await generations(model)).toBe(1);
  });
});

describe("MAX_CACHEABLE_MESSAGE_BYTES", () => {
  const parse = (body: unknown) => chatRequest.parse(body);

  it("Should bypass a message or a frame over the limit, counting UTF-8 bytes, and key one at the limit", () => {
    const text = "é".repeat(600); // 1,200 UTF-8 bytes, 600 UTF-16 units
    const body = parse({ model: "m", messages: [{ role: "user", content: text }] });
    expect(keyRequest(body, "t", "ns", 1_000)).toEqual({ ok: false, bypass: "message too large" });
    expect(keyRequest(body, "t", "ns", 2_000).ok).toBe(true);
    const tools = parse({ model: "m", tools: Array.from({ length: 20 }, (_, i) => tool(i)), messages: [{ role: "user", content: "hi" }] });
    expect(keyRequest(tools, "t", "ns", 1_000)).toEqual({ ok: false, bypass: "frame too large" });
    expect(keyRequest(tools, "t", "ns").ok).toBe(true);
  });

  it("Should parse the var, falling back to the default below D1's 1,000,000-byte row limit", () => {
    expect(DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES).toBeLessThan(1_000_000);
    const limit = (value: string | undefined) => parseConfig({ MAX_CACHEABLE_MESSAGE_BYTES: value }).config.maxCacheableMessageBytes;
    expect([limit("4096"), limit(undefined), limit("0"), limit("x")]).toEqual([
      4096,
      DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES,
      DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES,
      DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES,
    ]);
  });
});

describe("bodies whose parsed value is not exactly their text (docs/limits.md)", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

  it("Should answer 400 in the envelope for nesting deeper than MAX_JSON_DEPTH, on both APIs and in an import line", async () => {
    const chatText = `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":${nested(5000)}}`;
    const res = await chat(chatText);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    const messagesRes = await postMessages(`{"model":"c","max_tokens":5,"messages":[{"role":"user","content":"x"}],"metadata":${nested(5000)}}`);
    expect(messagesRes.status).toBe(400);
    const line = `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}],"params":{"x":${nested(5000)}}}`;
    const imported = await exports.default.fetch(
      new Request(`http://mm.test/api/import?tenant=${tenantOf("Bearer sk-deep")}`, {
        method: "POST",
        headers: { authorization: "Bearer test-admin-token" },
        body: line,
      }),
    );
    expect(imported.status).toBe(400);
    expect(((await imported.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    // At the limit, a body is accepted.
    const ok = await chat(`{"model":"${uniqueModel()}","messages":[{"role":"user","content":"x"}],"response_format":${nested(MAX_JSON_DEPTH - 4)}}`);
    expect(ok.status).toBe(200);
  });

  const lossy: Array<[string, string, string]> = [
    ["an integer seed past 2^53", '"seed":12345678901234567893', "inexact number"],
    ["a non-finite number", '"temperature":1e400', "non-finite number"],
    ["a duplicate key", '"temperature":0,"temperature":1', "duplicate JSON key"],
    ["a __proto__ parameter", '"__proto__":{"temperature":1}', "__proto__ key"],
    ["a quote in a key", '"metadata":{"\\"":1}', "quote in a JSON key"],
  ];
  for (const [name, param, reason] of lossy) {
    it(`Should bypass, never 500 or collapse, a body with ${name}`, async () => {
      const model = uniqueModel("lossy");
      const text = `{"model":"${model}","messages":[{"role":"user","content":"x"}],${param}}`;
      const res = await chat(text, { headers: { "x-request-id": `lossy-${model}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
      await res.arrayBuffer();
      expect(logLine(`lossy-${model}`)).toMatchObject({ outcome: "bypass", reason });
    });
  }

  it("Should bypass an Anthropic tool_use.input with an integer past 2^53", async () => {
    const text = `{"model":"${uniqueModel("claude")}","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"user_id":12345678901234567893}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`;
    const res = await postMessages(text);
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
  });
});
