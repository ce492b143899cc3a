import { describe, expect, it } from "vitest";
import { keyResponsesRequest } from "../../src/providers/responses/key";
import { responsesRequest } from "../../src/providers/responses/schema";
import { rawOf, setAt, type Allowed, type Json, type Outcome } from "./key-fuzz.support";
import { fuzzSuite, pathOf } from "./key-fuzz.suite";

/**
 * The key fuzzer on the Responses API (key-fuzz.support.ts): every documented field of the request, of each
 * input item (messages, reasoning items, function calls and their outputs), content part and tool, and the
 * keyed headers, changed alone, changes the key or bypasses, unless allowed below with docs/reliability.md's reason.
 */

const base: Json = {
  headers: { "openai-organization": "org-1", "openai-project": "proj-1", "openai-beta": "responses=v1" },
  body: {
    model: "gpt-5",
    instructions: "You are terse.",
    temperature: 0.2,
    top_p: 0.9,
    max_output_tokens: 500,
    max_tool_calls: 4,
    parallel_tool_calls: true,
    tool_choice: "auto",
    truncation: "disabled",
    reasoning: { effort: "low", summary: "auto" },
    text: { verbosity: "low", format: { type: "json_schema", name: "out", strict: true, schema: { type: "object", properties: { a: { type: "string" } } } } },
    include: ["reasoning.encrypted_content"],
    tools: [
      {
        type: "function",
        name: "get_weather",
        description: "Weather for a city",
        strict: true,
        parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["city"] },
      },
      { type: "function", name: "search", description: "Web search", parameters: { type: "object", properties: { q: { type: "string" } } } },
    ],
    input: [
      { type: "message", role: "developer", content: "Use tools." },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "Weather in Paris and Rome?" },
          { type: "input_text", text: "Celsius." },
        ],
      },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Two cities." }], encrypted_content: "enc-1" },
      { type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city":"Paris","unit":"c"}' },
      { type: "function_call", call_id: "call_b", name: "get_weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "call_a", output: "18C" },
      { type: "function_call_output", call_id: "call_b", output: "21C" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Paris 18C, Rome 21C.", annotations: [] }] },
      { role: "user", content: "And tomorrow?" },
    ],
  },
};

/** Documented fields absent from the base, added one at a time. */
const ADDED: Array<[string, Json]> = [
  // Another value the API allows for an enum-like field (a role, a tool choice, an effort): the generic mutations' values are 400s.
  ["/body/input/0/role", "system"],
  ["/body/input/0/role", "user"],
  ["/body/input/8/role", "assistant"],
  ["/body/tool_choice", "required"],
  ["/body/tool_choice", "none"],
  ["/body/tool_choice", { type: "function", name: "search" }],
  ["/body/truncation", "auto"],
  ["/body/reasoning/effort", "high"],
  ["/body/text/verbosity", "high"],
  ["/body/input", "And tomorrow?"],
  ["/body/input/1/content/2", { type: "input_image", image_url: "https://x.test/a.png" }],
  ["/body/input/1/content/2", { type: "input_file", file_id: "file-1" }],
  ["/body/input/9", { type: "item_reference", id: "msg_0" }],
  ["/body/input/7/phase", "final_answer"],
  ["/body/input/2/content", [{ type: "reasoning_text", text: "Two cities." }]],
  ["/body/tools/2", { type: "web_search" }],
  ["/body/tools/2", { type: "custom", name: "grammar" }],
  ["/body/include/1", "message.output_text.logprobs"],
  ["/body/context_management", [{ type: "compaction", compact_threshold: 1000 }]],
  ["/body/stream", true],
  ["/body/stream_options", { include_obfuscation: false }],
  ["/body/metadata", { a: "b" }],
  ["/body/user", "u1"],
  ["/body/safety_identifier", "s"],
  ["/body/prompt_cache_key", "k"],
  ["/body/prompt_cache_retention", "24h"],
  ["/body/service_tier", "flex"],
  ["/body/store", false],
  ["/body/background", false],
  ["/body/store", true],
  ["/body/background", true],
  ["/body/previous_response_id", "resp_1"],
  ["/body/conversation", "conv_1"],
  ["/body/prompt", { id: "pmpt_1" }],
  ["/body/top_logprobs", 2],
  ["/body/client_metadata", { thread: "t" }],
  ["/body/input/3/id", "fc_1"],
  ["/body/input/3/status", "completed"],
  ["/body/input/7/id", "msg_1"],
  ["/body/input/7/status", "completed"],
  ["/body/input/5/status", "completed"],
];

const DOCUMENTED = [
  ...["model", "instructions", "temperature", "top_p", "max_output_tokens", "max_tool_calls", "parallel_tool_calls", "tool_choice", "truncation"],
  ...["reasoning", "reasoning/effort", "reasoning/summary", "text/verbosity", "text/format", "text/format/schema", "include", "tools", "input"],
  ...["stream", "stream_options", "metadata", "user", "safety_identifier", "prompt_cache_key", "prompt_cache_retention", "service_tier", "store"],
  ...["background", "previous_response_id", "conversation", "prompt", "top_logprobs"],
  ...["tools/*/type", "tools/*/name", "tools/*/description", "tools/*/parameters", "tools/*/strict"],
  ...["input/*/type", "input/*/role", "input/*/content", "input/*/content/*/type", "input/*/content/*/text", "input/*/content/*/annotations"],
  ...["input/*/summary/*/text", "input/*/encrypted_content", "input/*/call_id", "input/*/name", "input/*/arguments", "input/*/output"],
  ...["input/*/id", "input/*/status"],
].map((f) => `/body/${f}`);
const HEADERS = Object.keys((base as { headers: object }).headers).map((h) => `/headers/${h}`);

/** Changes that may keep the key, each with docs/reliability.md's reason ("The ignore list"; src/providers/responses/frame.ts `IGNORED`). */
const ALLOWED: Allowed = {
  "/body/stream": "delivery",
  "/body/stream_options": "delivery",
  "/body/metadata": "bookkeeping",
  "/body/user": "abuse tracking",
  "/body/safety_identifier": "abuse tracking",
  "/body/prompt_cache_key": "the upstream's prompt cache",
  "/body/prompt_cache_retention": "the upstream's prompt cache",
  "/body/service_tier": "billing",
  "/body/store": "`store` when not true (true bypasses)",
  "/body/background": "`background` when false (true bypasses)",
  "/body/client_metadata": "Codex's thread, turn and session ids: telemetry",
  "/body/input/*/id": "an output item's id (but a reasoning item's) is the upstream's bookkeeping, not read by the model",
  "/body/input/*/status": "an output item's status is bookkeeping, not read by the model",
  "/headers field added": "headers other than the keyed ones are not keyed",
  "/body/input/*/type removed": "an input item with a `role` and no `type` is a message (the SDK's EasyInputMessage)",
  "/body/input/*/content/*/annotations removed": "`annotations: []` is what SDKs echo back: empty and absent alike",
};

function keyOf(request: Json): Outcome {
  const { body, headers } = request as { body: unknown; headers: Record<string, unknown> };
  const parsed = responsesRequest.safeParse(body);
  if (!parsed.success) return { invalid: parsed.error.message };
  const h = new Headers(Object.entries(headers ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  const scope = { tenant: "t", namespace: "default", maxMessageBytes: 256 * 1024 };
  const out = keyResponsesRequest(parsed.data, scope, { url: new URL("https://mm.test/v1/responses"), headers: h, raw: rawOf(request) });
  return out.ok ? { key: out.key.key } : "bypass" in out ? { bypass: out.bypass } : { invalid: out.invalid.message };
}

describe("key fuzzer: Responses", () => {
  fuzzSuite({ base, keyOf, allowed: ALLOWED, added: ADDED, documented: [...DOCUMENTED, ...HEADERS], atLeast: 250 });

  it("Should keep the key for the spellings the docs call one (a string or one text part, a call_id renamed everywhere)", () => {
    const key = keyOf(base);
    expect(keyOf(setAt(base, ["body", "input", 8, "content"], [{ type: "input_text", text: "And tomorrow?" }]))).toEqual(key);
    const renamed = setAt(setAt(base, ["body", "input", 3, "call_id"], "call_zz"), ["body", "input", 5, "call_id"], "call_zz");
    expect(keyOf(renamed)).toEqual(key);
    expect(keyOf(setAt(base, ["body", "input", 0, "type"], undefined))).toEqual(key);
    expect(keyOf(setAt(base, ["body", "input", 7, "content", 0, "annotations"], undefined))).toEqual(key);
  });

  it("Should keep the key for the allowed fields (the allow-list is honest)", () => {
    const key = keyOf(base);
    const same = ADDED.filter(([a, v]) => /stream|metadata|user|safety|prompt_cache|service_tier|client_metadata|\/id$|status/.test(a) || v === false);
    expect(same.length).toBeGreaterThan(12);
    for (const [at, value] of same) expect(keyOf(setAt(base, pathOf(at), value)), at).toEqual(key);
  });

  it("Should bypass the documented server-state fields", () => {
    for (const at of ["/body/store", "/body/background", "/body/previous_response_id", "/body/conversation", "/body/prompt", "/body/top_logprobs"]) {
      const value = ADDED.find(([a, v]) => a === at && v !== false)![1];
      expect(keyOf(setAt(base, pathOf(at), value)), at).toHaveProperty("bypass");
    }
  });
});
