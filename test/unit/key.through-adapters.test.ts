import { describe, expect, it } from "vitest";
import { scanJson } from "../../src/core/exact-json";
import { bodySpellings } from "../../src/core/number-text";
import type { KeyOutcome, KeyScope, ProviderAdapter, ProviderKey } from "../../src/cache/provider";
import { chatAdapter } from "../../src/providers/chat/adapter";
import { geminiAdapter } from "../../src/providers/gemini/adapter";
import { messagesAdapter } from "../../src/providers/anthropic/adapter";
import { responsesAdapter } from "../../src/providers/responses/adapter";

/**
 * The key as each provider adapter computes it, as a live route keys a
 * request: what the upstream reads outside the body (the query string, the
 * headers that pick the account, project, workspace or beta features) is
 * keyed; server-side state the request only names bypasses the cache; a body
 * field spelled like one of those frame entries cannot forge it; numbers keep
 * the text they were written with; fields inside content parts are keyed.
 */

const scope: KeyScope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };

type Outcome = KeyOutcome<ProviderKey>;

function keyThrough<B>(adapter: ProviderAdapter<B, ProviderKey, unknown>, path: string, body: unknown, headers: Record<string, string> = {}): Outcome {
  const parsed = adapter.schema.safeParse(body);
  if (!parsed.success) throw new Error(`schema rejected ${JSON.stringify(body)}`);
  return adapter.key({ body: parsed.data, raw: JSON.stringify(body), url: new URL(`http://mm.test${path}`), headers: new Headers(headers) }, scope);
}

const as = <B, K extends ProviderKey, A>(adapter: ProviderAdapter<B, K, A>) => adapter as unknown as ProviderAdapter<B, ProviderKey, unknown>;

/** The tree and h_n of a keyed request; the bypass reason otherwise. */
function keyOf(outcome: Outcome): string {
  if (outcome.ok) return `${outcome.key.treeId}/${outcome.key.key}`;
  return "bypass" in outcome ? `bypass: ${outcome.bypass}` : `invalid: ${outcome.invalid.message}`;
}

const chatBody = { model: "gpt-x", messages: [{ role: "user", content: "hi" }] };
const chat = (path: string, headers?: Record<string, string>, body: unknown = chatBody) => keyOf(keyThrough(as(chatAdapter), path, body, headers));
const messagesBody = { model: "claude-x", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
const messages = (path: string, headers: Record<string, string> = {}, body: unknown = messagesBody) =>
  keyOf(keyThrough(as(messagesAdapter), path, body, { "anthropic-version": "2023-06-01", ...headers }));
const responsesBody = { model: "gpt-x", input: "hi" };
const responses = (path: string, headers?: Record<string, string>, body: unknown = responsesBody) =>
  keyOf(keyThrough(as(responsesAdapter), path, body, headers));
const geminiBody = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
const gemini = (query: string, body: unknown = geminiBody, action = "generateContent") =>
  keyOf(keyThrough(as(geminiAdapter), `/v1beta/models/gemini-x:${action}${query}`, body));

describe("the key: the query string is keyed", () => {
  it("Should key chat's ?api-version= (Azure reads it) and every other parameter", () => {
    const plain = chat("/v1/chat/completions");
    const v1 = chat("/v1/chat/completions?api-version=2024-10-21");
    expect(plain).not.toMatch(/^bypass/);
    expect(v1).not.toBe(plain);
    expect(chat("/v1/chat/completions?api-version=2025-04-01-preview")).not.toBe(v1);
    expect(chat("/v1/chat/completions?api-version=2024-10-21")).toBe(v1);
    expect(chat("/v1/chat/completions?future=1")).not.toBe(plain);
    // The frame is stored: a query value (a credential under a name we do not know) never is.
    const keyed = keyThrough(as(chatAdapter), "/v1/chat/completions?api_key=sk-secret-123", chatBody);
    expect(keyed.ok && keyed.key.frameJson).toContain("api_key#");
    expect(keyed.ok && keyed.key.frameJson).not.toContain("sk-secret-123");
    // Both decode to U+FFFD, but the upstream receives the bytes as sent.
    expect(chat("/v1/chat/completions?api-version=%FF")).not.toBe(chat("/v1/chat/completions?api-version=%FE"));
  });

  it("Should key the Messages, Responses and Gemini query strings, but for the credential (key) and Gemini's alt", () => {
    expect(messages("/v1/messages?beta=true")).not.toBe(messages("/v1/messages"));
    expect(responses("/v1/responses?api-version=2025-04-01-preview")).not.toBe(responses("/v1/responses"));
    const plain = gemini("");
    expect(plain).not.toMatch(/^bypass/);
    expect(gemini("?future=1")).not.toBe(plain);
    // The credential is the tenant (here fixed by the scope); alt=sse is the stream's framing.
    expect(gemini("?key=abc")).toBe(plain);
    expect(gemini("?%6Bey=abc")).toBe(plain);
    expect(gemini("?alt=sse", geminiBody, "streamGenerateContent")).toBe(plain);
  });
});

describe("the key: headers that pick whose account answers are keyed", () => {
  it("Should key OpenAI-Organization, OpenAI-Project and OpenAI-Beta on chat and Responses", () => {
    for (const key of [(h?: Record<string, string>) => chat("/v1/chat/completions", h), (h?: Record<string, string>) => responses("/v1/responses", h)]) {
      const plain = key();
      const projectA = key({ "OpenAI-Project": "proj_a" });
      expect(projectA).not.toBe(plain);
      expect(key({ "OpenAI-Project": "proj_b" })).not.toBe(projectA);
      expect(key({ "OpenAI-Organization": "org_a" })).not.toBe(plain);
      expect(key({ "OpenAI-Beta": "assistants=v2" })).not.toBe(plain);
      // Telemetry headers stay out.
      expect(key({ "x-stainless-retry-count": "1", "user-agent": "OpenAI/JS 6" })).toBe(plain);
    }
  });

  it("Should key anthropic-workspace-id and anthropic-user-profile-id on Messages (anthropic-version stays out)", () => {
    const plain = messages("/v1/messages");
    expect(messages("/v1/messages", { "anthropic-workspace-id": "wrkspc_a" })).not.toBe(plain);
    expect(messages("/v1/messages", { "anthropic-workspace-id": "wrkspc_a" })).not.toBe(messages("/v1/messages", { "anthropic-workspace-id": "wrkspc_b" }));
    expect(messages("/v1/messages", { "anthropic-user-profile-id": "up_a" })).not.toBe(plain);
    expect(messages("/v1/messages", { "anthropic-version": "2099-01-01" })).toBe(plain);
  });
});

describe("the key: a body field cannot stand in for a header or the query", () => {
  it("Should not give a body field named like a frame header the key of the request that sends the header", () => {
    const header = messages("/v1/messages", { "anthropic-beta": "x-2025" });
    const field = messages("/v1/messages", {}, { ...messagesBody, "anthropic-beta": "x-2025" });
    expect(field).not.toBe(header);
    expect(field).toBe("bypass: reserved body field");
    expect(chat("/v1/chat/completions", {}, { ...chatBody, "openai-project": "proj_a" })).not.toBe(
      chat("/v1/chat/completions", { "openai-project": "proj_a" }),
    );
  });

  it("Should not give a body field muscle-mem:query the key of the request with that query string", () => {
    const query = chat("/v1/chat/completions?api-version=1");
    expect(chat("/v1/chat/completions", {}, { ...chatBody, "muscle-mem:query": ["api-version=1"] })).not.toBe(query);
    expect(responses("/v1/responses", {}, { ...responsesBody, "muscle-mem:api": "anthropic" })).toBe("bypass: reserved body field");
    expect(gemini("", { ...geminiBody, "muscle-mem:query": [["v", "1"]] })).toBe("bypass: reserved body field");
    // The frame's model is the URL's: a body `model` would have replaced it (models/a with {"model":"b"} keyed as models/b).
    expect(gemini("", { ...geminiBody, model: "other" })).toBe("bypass: reserved body field");
  });
});

describe("the key: a valid request the cache cannot key is passed through, not refused", () => {
  it("Should bypass a chat history with a custom (free-form) tool call, and still refuse an unknown call type", () => {
    const history = (call: Record<string, unknown>) => ({
      model: "gpt-x",
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: "c1", content: "r" },
      ],
    });
    expect(chat("/v1/chat/completions", {}, history({ id: "c1", type: "custom", custom: { name: "sql", input: "SELECT 1" } }))).toBe(
      "bypass: custom tool call",
    );
    expect(() => chat("/v1/chat/completions", {}, history({ id: "c1", type: "code", function: { name: "f", arguments: "{}" } }))).toThrow(/schema rejected/);
  });
});

describe("the key: answers that depend on what the request only names bypass the cache", () => {
  it("Should bypass chat's web_search_options (the upstream searches the live web, as the other APIs' server tools)", () => {
    expect(chat("/v1/chat/completions", {}, { ...chatBody, web_search_options: {} })).toBe("bypass: web search");
    expect(chat("/v1/chat/completions", {}, { ...chatBody, web_search_options: null })).toBe(chat("/v1/chat/completions"));
  });

  it("Should bypass Anthropic mcp_servers (the model reads tools the request does not hold)", () => {
    const servers = [{ type: "url", url: "https://mcp.example.com/sse", name: "example" }];
    expect(messages("/v1/messages", {}, { ...messagesBody, mcp_servers: servers })).toBe("bypass: mcp servers");
    expect(messages("/v1/messages", {}, { ...messagesBody, mcp_servers: [] })).not.toMatch(/^bypass/);
  });
});

describe("the key: numbers JSON.parse changes bypass the cache", () => {
  it("Should find a number too small for a double (it parses to 0) as it finds one too large", () => {
    expect(scanJson('{"input":{"amount":1e-400}}').lossy).toBe("inexact number");
    expect(scanJson('{"input":{"amount":-2.5e-999}}').lossy).toBe("inexact number");
    expect(scanJson('{"a":0,"b":0.000,"c":0e-400,"d":0E5,"e":1e-300}').lossy).toBeNull();
    expect(scanJson('{"a":-0.0e1}').lossy).toBe("negative zero");
  });
});

/** Keys a body given as JSON text (numbers as written) through an adapter, as the route does. */
function keyText<B>(adapter: ProviderAdapter<B, ProviderKey, unknown>, path: string, raw: string, headers: Record<string, string> = {}): string {
  const parsed = adapter.schema.safeParse(JSON.parse(raw));
  if (!parsed.success) throw new Error(`schema rejected ${raw}`);
  return keyOf(adapter.key({ body: parsed.data, raw, url: new URL(`http://mm.test${path}`), headers: new Headers(headers) }, scope));
}

describe("the key: numbers keep the text they were written with", () => {
  const toolTurn = (qty: string) =>
    `{"model":"claude-x","max_tokens":16,"messages":[{"role":"user","content":"order"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"order","input":{"sku":"A-1","qty":${qty}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}]}`;
  const messagesText = (raw: string) => keyText(as(messagesAdapter), "/v1/messages", raw, { "anthropic-version": "2023-06-01" });

  it("Should tell apart an Anthropic tool_use input of 1 and of 1.0 (a Python client echoes the float), and key 1.0 alike twice", () => {
    expect(messagesText(toolTurn("1"))).not.toBe(messagesText(toolTurn("1.0")));
    expect(messagesText(toolTurn("1.0"))).toBe(messagesText(toolTurn("1.0")));
    expect(messagesText(toolTurn("1e2"))).not.toBe(messagesText(toolTurn("100")));
    // The tree is the same: only the message that holds the number moves.
    expect(messagesText(toolTurn("1")).split("/")[0]).toBe(messagesText(toolTurn("1.0")).split("/")[0]);
    // Whitespace and key order still do not matter.
    expect(messagesText(toolTurn("1.0").replace('"sku":"A-1","qty":1.0', '"qty": 1.0, "sku": "A-1"'))).toBe(messagesText(toolTurn("1.0")));
  });

  it("Should key how the frame's numbers are written (a tool schema's maximum, temperature) on chat, Responses and Messages", () => {
    const chatText = (raw: string) => keyText(as(chatAdapter), "/v1/chat/completions", raw);
    const tools = (max: string) =>
      `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"n":{"type":"number","maximum":${max}}}}}}]}`;
    expect(chatText(tools("10"))).not.toBe(chatText(tools("10.0")));
    expect(chatText('{"model":"m","temperature":1,"messages":[{"role":"user","content":"hi"}]}')).not.toBe(
      chatText('{"model":"m","temperature":1.0,"messages":[{"role":"user","content":"hi"}]}'),
    );
    const responsesText = (raw: string) => keyText(as(responsesAdapter), "/v1/responses", raw);
    expect(responsesText('{"model":"m","input":"hi","temperature":0.50}')).not.toBe(responsesText('{"model":"m","input":"hi","temperature":0.5}'));
    expect(messagesText('{"model":"c","max_tokens":16,"temperature":1.0,"messages":[{"role":"user","content":"hi"}]}')).not.toBe(
      messagesText('{"model":"c","max_tokens":16,"temperature":1,"messages":[{"role":"user","content":"hi"}]}'),
    );
  });

  it("Should leave out numbers in fields the frame leaves out, numbers inside strings, and Gemini (it reads every number as a double)", () => {
    const chatText = (raw: string) => keyText(as(chatAdapter), "/v1/chat/completions", raw);
    expect(chatText('{"model":"m","stream_options":{"include_usage":true,"n":1.0},"messages":[{"role":"user","content":"v: 1.0, 2e5"}]}')).toBe(
      chatText('{"model":"m","stream_options":{"include_usage":true,"n":1},"messages":[{"role":"user","content":"v: 1.0, 2e5"}]}'),
    );
    const geminiText = (n: string) =>
      keyText(
        as(geminiAdapter),
        "/v1beta/models/g:generateContent",
        `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"n":${n}}}}]}]}`,
      );
    expect(geminiText("1.0")).toBe(geminiText("1"));
  });

  it("Should find each number written otherwise than JSON.stringify would, with its pointer", () => {
    expect(bodySpellings('{"a":"x: 1.0","b":[1,2.5,3]}', "messages")).toBeNull();
    const found = bodySpellings('{"t" : 1.0, "a/b~": {"c": [0.0000001, 1E3, 2.50, -0, 5]}, "messages": [{"n": 2}, {"x": {"y": 3.0}}]}', "messages");
    expect(found?.top).toEqual([
      ["/t", "1.0"],
      ["/a~1b~0/c/0", "0.0000001"],
      ["/a~1b~0/c/1", "1E3"],
      ["/a~1b~0/c/2", "2.50"],
      ["/a~1b~0/c/3", "-0"],
    ]);
    expect([...(found?.items ?? [])]).toEqual([[1, [["/x/y", "3.0"]]]]);
  });
});

describe("the key: fields inside content parts and function objects are keyed, not dropped", () => {
  it("Should key a Gemini functionResponse's other fields and bypass one with parts (a multimodal result)", () => {
    const turn = (response: Record<string, unknown>) => ({
      contents: [
        { role: "user", parts: [{ text: "go" }] },
        { role: "model", parts: [{ functionCall: { id: "c1", name: "f", args: {} } }] },
        { role: "user", parts: [{ functionResponse: { id: "c1", name: "f", response: { ok: true }, ...response } }] },
      ],
    });
    const plain = gemini("", turn({}));
    expect(plain).not.toMatch(/^bypass/);
    expect(gemini("", turn({ willContinue: true }))).not.toBe(plain);
    expect(gemini("", turn({ scheduling: "SILENT" }))).not.toBe(plain);
    expect(gemini("", turn({ parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] }))).toBe("bypass: functionResponse parts");
    expect(gemini("", turn({ parts: [], willContinue: null }))).toBe(plain);
  });

  it("Should bypass a Gemini content with a field besides role and parts (the node keeps only those)", () => {
    expect(gemini("", { contents: [{ role: "user", parts: [{ text: "hi" }], futureField: 1 }] })).toBe("bypass: content with other fields");
    expect(gemini("", { contents: [{ role: "user", parts: [{ text: "hi" }], futureField: null }] })).toBe(gemini(""));
  });

  it("Should key a Gemini functionCall's other fields", () => {
    const call = (extra: Record<string, unknown>) => ({
      contents: [
        { role: "user", parts: [{ text: "go" }] },
        { role: "model", parts: [{ functionCall: { name: "f", args: {}, ...extra } }] },
        { role: "user", parts: [{ text: "next" }] },
      ],
    });
    expect(gemini("", call({ partialArgs: [{ jsonPath: "$.a" }] }))).not.toBe(gemini("", call({})));
  });

  it("Should not merge Responses text or refusal parts that carry other fields with plain ones", () => {
    const input = (part: Record<string, unknown>) => ({ model: "gpt-x", input: [{ role: "user", content: [{ type: "input_text", text: "hi", ...part }] }] });
    expect(responses("/v1/responses", {}, input({}))).toBe(responses("/v1/responses"));
    expect(responses("/v1/responses", {}, input({ annotations: [], logprobs: null }))).toBe(responses("/v1/responses"));
    expect(responses("/v1/responses", {}, input({ cache_control: { type: "ephemeral" } }))).toBe("bypass: text part with other fields");
    const refusal = {
      model: "gpt-x",
      input: [
        { role: "user", content: "q" },
        { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "no", reason: "policy" }] },
        { role: "user", content: "why" },
      ],
    };
    expect(responses("/v1/responses", {}, refusal)).toBe("bypass: refusal part with other fields");
  });
});
