import { describe, expect, it } from "vitest";
import { chatRequest } from "../../src/core/messages";
import { keyRequest } from "../../src/providers/chat/key";
import { rawOf, setAt, type Allowed, type Json, type Outcome } from "./key-fuzz.support";
import { fuzzSuite } from "./key-fuzz.suite";

/**
 * The key fuzzer on Chat Completions (key-fuzz.support.ts): every documented field of the request, of each
 * message, content part, tool call and tool, and the keyed headers, changed alone, changes the key or bypasses,
 * unless allowed below with docs/reliability.md's reason.
 */

const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather for a city",
    strict: true,
    parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["city"] },
  },
};
const search = {
  type: "function",
  function: { name: "search", description: "Web search", parameters: { type: "object", properties: { q: { type: "string" } } } },
};

const base: Json = {
  headers: {
    "openai-organization": "org-1",
    "openai-project": "proj-1",
    "openai-beta": "assistants=v2",
    "x-policy-id": "p1",
    "extra-parameters": "pass-through",
    "azureml-model-deployment": "d1",
  },
  body: {
    model: "gpt-4.1",
    temperature: 0.2,
    top_p: 0.9,
    max_tokens: 300,
    max_completion_tokens: 400,
    frequency_penalty: 0.1,
    presence_penalty: 0.2,
    seed: 42,
    stop: ["END", "STOP"],
    logit_bias: { "50256": -100 },
    parallel_tool_calls: true,
    tool_choice: "auto",
    response_format: { type: "json_schema", json_schema: { name: "out", strict: true, schema: { type: "object", properties: { a: { type: "string" } } } } },
    reasoning_effort: "low",
    verbosity: "medium",
    prediction: { type: "content", content: "draft" },
    modalities: ["text"],
    n: 1,
    tools: [weather, search],
    messages: [
      { role: "system", content: "You are terse.", name: "sys" },
      { role: "developer", content: [{ type: "text", text: "Use tools." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in Paris and Rome?" },
          { type: "text", text: "Celsius." },
        ],
        name: "ann",
      },
      {
        role: "assistant",
        content: "Checking.",
        name: "bot",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris","unit":"c"}' } },
          { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "18C" },
      { role: "tool", tool_call_id: "call_b", content: [{ type: "text", text: "21C" }] },
      { role: "assistant", content: null, refusal: "I cannot." },
      { role: "user", content: "And tomorrow?" },
    ],
  },
};

/** Documented fields absent from the base, added one at a time (the API reference; `function` messages and `functions`, deprecated, too). */
const ADDED: Array<[string, Json]> = [
  // Another value the API allows for an enum-like field (a role, a tool choice, an effort): the generic mutations' values are 400s.
  ["/body/messages/0/role", "developer"],
  ["/body/messages/1/role", "system"],
  ["/body/messages/7/role", "assistant"],
  ["/body/tool_choice", "required"],
  ["/body/tool_choice", "none"],
  ["/body/tool_choice", { type: "function", function: { name: "search" } }],
  ["/body/reasoning_effort", "high"],
  ["/body/verbosity", "low"],
  ["/body/response_format", { type: "json_object" }],
  ["/body/response_format", { type: "text" }],
  ["/body/stop", "END"],
  ["/body/functions", [{ name: "f", parameters: { type: "object" } }]],
  ["/body/function_call", "auto"],
  ["/body/messages/7/name", "zed"],
  ["/body/messages/4/name", "t"],
  ["/body/messages/6/function_call", { name: "get_weather", arguments: "{}" }],
  ["/body/messages/3/annotations", [{ type: "url_citation", url_citation: { url: "https://x", title: "t", start_index: 0, end_index: 1 } }]],
  ["/body/messages/8", { role: "function", name: "get_weather", content: "ok" }],
  ["/body/messages/2/content/0/cache_control", { type: "ephemeral" }],
  ["/body/messages/2/content/2", { type: "image_url", image_url: { url: "https://x.test/a.png" } }],
  ["/body/messages/2/content/2", { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }],
  ["/body/messages/2/content/2", { type: "file", file: { file_id: "file-1" } }],
  ["/body/messages/3/audio", { id: "audio_1" }],
  ["/body/messages/3/reasoning_content", "Two cities."],
  ["/body/tools/2", { type: "custom", custom: { name: "grammar" } }],
  ["/body/n", 2],
  ["/body/logprobs", true],
  ["/body/top_logprobs", 2],
  ["/body/audio", { voice: "alloy", format: "mp3" }],
  ["/body/web_search_options", {}],
  ["/body/stream", true],
  ["/body/user", "u1"],
  ["/body/metadata", { a: "b" }],
  ["/body/store", true],
  ["/body/service_tier", "flex"],
  ["/body/prompt_cache_key", "k"],
  ["/body/safety_identifier", "s"],
  ["/body/stream_options", { include_usage: true }],
];

/** The API reference's request fields (top level, messages, parts, tool calls, tools) and the keyed headers. */
const DOCUMENTED = [
  ...["model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "frequency_penalty", "presence_penalty", "seed", "stop"],
  ...["logit_bias", "parallel_tool_calls", "tool_choice", "response_format", "reasoning_effort", "verbosity", "prediction", "modalities", "n", "tools"],
  ...["functions", "function_call", "stream", "user", "metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier", "stream_options"].map(
    (f) => f,
  ),
].map((f) => `/body/${f}`);
const DOCUMENTED_NESTED = [
  "/body/messages/*/role",
  "/body/messages/*/content",
  "/body/messages/*/name",
  "/body/messages/*/content/*/type",
  "/body/messages/*/content/*/text",
  "/body/messages/*/refusal",
  "/body/messages/*/tool_calls/*/id",
  "/body/messages/*/tool_calls/*/type",
  "/body/messages/*/tool_calls/*/function/name",
  "/body/messages/*/tool_calls/*/function/arguments",
  "/body/messages/*/tool_call_id",
  "/body/messages/*/function_call",
  "/body/tools/*/function/name",
  "/body/tools/*/function/description",
  "/body/tools/*/function/parameters",
  "/body/tools/*/function/strict",
  ...Object.keys((base as { headers: object }).headers).map((h) => `/headers/${h}`),
];

/** Paths that may keep the key, each with docs/reliability.md's reason ("The ignore list"). */
const ALLOWED: Allowed = {
  "/body/stream": "delivery (TRANSPORT_KEYS)",
  "/body/stream_options": "delivery",
  "/body/user": "abuse tracking",
  "/body/metadata": "bookkeeping",
  "/body/store": "bookkeeping",
  "/body/service_tier": "billing",
  "/body/prompt_cache_key": "the upstream's prompt cache",
  "/body/safety_identifier": "abuse tracking",
  "/body/messages/*/content/*/cache_control/**": "prompt-caching hint",
  "/headers field added": "headers other than the keyed ones (user-agent, x-stainless-*, tracing) are not keyed",
  "/body/messages/*/tool_calls/*/type removed": "a tool call without `type` is a function call, the only kind cached (a `custom` one bypasses)",
};

function keyOf(request: Json): Outcome {
  const { body, headers } = request as { body: unknown; headers: Record<string, unknown> };
  const parsed = chatRequest.safeParse(body);
  if (!parsed.success) return { invalid: parsed.error.message };
  const h = new Headers(Object.entries(headers ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  const out = keyRequest(parsed.data, "t", "default", undefined, {
    url: new URL("https://mm.test/v1/chat/completions"),
    headers: h,
    raw: rawOf(request),
  });
  return out.ok ? { key: out.key.key } : "bypass" in out ? { bypass: out.bypass } : { invalid: out.invalid.message };
}

describe("key fuzzer: Chat Completions", () => {
  fuzzSuite({ base, keyOf, allowed: ALLOWED, added: ADDED, documented: [...DOCUMENTED, ...DOCUMENTED_NESTED], atLeast: 300 });

  it("Should keep the key for the spellings the docs call one (content as a string or one text part, a tool call's id renamed everywhere)", () => {
    const key = keyOf(base);
    expect(keyOf(setAt(base, ["body", "messages", 7, "content"], [{ type: "text", text: "And tomorrow?" }]))).toEqual(key);
    const renamed = setAt(setAt(base, ["body", "messages", 3, "tool_calls", 0, "id"], "call_zz"), ["body", "messages", 4, "tool_call_id"], "call_zz");
    expect(keyOf(renamed)).toEqual(key);
    expect(keyOf(setAt(base, ["body", "messages", 3, "tool_calls", 0, "type"], undefined))).toEqual(key);
    expect(keyOf(setAt(base, ["headers", "user-agent"], "OpenAI/Python 1.0"))).toEqual(key);
  });

  it("Should keep the key for the allowed fields (the allow-list is honest)", () => {
    const key = keyOf(base);
    for (const [at, value] of ADDED.filter(([a]) => /stream|user|metadata|store|service_tier|prompt_cache_key|safety_identifier|cache_control/.test(a))) {
      const path = at
        .split("/")
        .slice(1)
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
      expect(keyOf(setAt(base, path, value)), at).toEqual(key);
    }
  });
});
