import { describe, expect, it } from "vitest";
import { keyMessagesRequest } from "../../src/providers/anthropic/key";
import { messagesRequest } from "../../src/providers/anthropic/schema";
import { rawOf, setAt, type Allowed, type Json, type Outcome } from "./key-fuzz.support";
import { fuzzSuite, pathOf } from "./key-fuzz.suite";

/**
 * The key fuzzer on Anthropic Messages (key-fuzz.support.ts): every documented field of the request, of each
 * message and content block, tool and tool_choice, and the keyed headers, changed alone, changes the key or
 * bypasses, unless allowed below with docs/reliability.md's reason.
 */

const base: Json = {
  headers: { "anthropic-beta": "tools-2024", "anthropic-workspace-id": "ws-1", "anthropic-user-profile-id": "up-1", "anthropic-version": "2023-06-01" },
  body: {
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    system: [
      { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "Use tools." },
    ],
    temperature: 0.3,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ["END", "STOP"],
    thinking: { type: "enabled", budget_tokens: 2048 },
    tool_choice: { type: "auto", disable_parallel_tool_use: false },
    context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
    output_format: { type: "json_schema", schema: { type: "object", properties: { a: { type: "string" } } } },
    tools: [
      {
        name: "get_weather",
        description: "Weather for a city",
        input_schema: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["city"] },
        strict: true,
      },
      { name: "search", description: "Web search", input_schema: { type: "object", properties: { q: { type: "string" } } } },
    ],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in Paris and Rome?" },
          { type: "text", text: "Celsius." },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Two cities.", signature: "sig-1" },
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris", unit: "c", days: 2 } },
          { type: "tool_use", id: "toolu_b", name: "get_weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_a", content: "18C" },
          { type: "tool_result", tool_use_id: "toolu_b", content: [{ type: "text", text: "21C" }], is_error: false },
          { type: "text", text: "And tomorrow?" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "Sure." },
        ],
      },
      { role: "user", content: "Go on." },
    ],
  },
};

/** Documented fields absent from the base, added one at a time. */
const ADDED: Array<[string, Json]> = [
  // Another value the API allows for an enum-like field (a role, a tool choice, an effort): the generic mutations' values are 400s.
  ["/body/messages/4/role", "assistant"],
  ["/body/tool_choice", { type: "any" }],
  ["/body/tool_choice", { type: "none" }],
  ["/body/tool_choice", { type: "tool", name: "search" }],
  ["/body/thinking", { type: "disabled" }],
  ["/body/messages/0/content/2", { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }],
  ["/body/messages/0/content/2", { type: "document", source: { type: "text", media_type: "text/plain", data: "doc" } }],
  ["/body/messages/1/content/2/caller", { type: "code_execution_20250825", tool_id: "srvtoolu_1" }],
  ["/body/messages/2/content/0/content", [{ type: "image", source: { type: "url", url: "https://x.test/a.png" } }]],
  ["/body/tools/2", { type: "web_search_20250305", name: "web_search" }],
  ["/body/container", "container_1"],
  ["/body/mcp_servers", [{ type: "url", url: "https://mcp.test", name: "m" }]],
  ["/body/inference_geo", "us"],
  ["/body/speed", "fast"],
  ["/body/fallbacks", [{ model: "claude-haiku-4-5" }]],
  ["/body/cache_control", { type: "ephemeral" }],
  ["/body/stream", true],
  ["/body/metadata", { user_id: "u1" }],
  ["/body/service_tier", "standard_only"],
  ["/body/messages/0/content/0/cache_control", { type: "ephemeral" }],
  ["/body/tools/1/cache_control", { type: "ephemeral" }],
  ["/body/messages/2/content/0/cache_control", { type: "ephemeral" }],
  ["/body/messages/2/content/0/is_error", true],
  ["/body/output_config", { effort: "low" }],
  ["/headers/anthropic-dangerous-direct-browser-access", "true"],
];

/** The API reference's request fields, message and block fields, tool and tool_choice fields, and the keyed headers. */
const DOCUMENTED = [
  ...["model", "max_tokens", "system", "temperature", "top_p", "top_k", "stop_sequences", "thinking", "tool_choice", "tools", "messages"],
  ...["context_management", "output_format", "output_config", "stream", "metadata", "service_tier"],
  "system/*/text",
  "thinking/budget_tokens",
  "tool_choice/type",
  "tool_choice/disable_parallel_tool_use",
  "tools/*/name",
  "tools/*/description",
  "tools/*/input_schema",
  "tools/*/strict",
  "messages/*/role",
  "messages/*/content",
  "messages/*/content/*/type",
  "messages/*/content/*/text",
  "messages/*/content/*/thinking",
  "messages/*/content/*/signature",
  "messages/*/content/*/data",
  "messages/*/content/*/id",
  "messages/*/content/*/name",
  "messages/*/content/*/input",
  "messages/*/content/*/tool_use_id",
  "messages/*/content/*/is_error",
].map((f) => `/body/${f}`);
const HEADERS = ["anthropic-beta", "anthropic-workspace-id", "anthropic-user-profile-id"].map((h) => `/headers/${h}`);

/** Changes that may keep the key, each with docs/reliability.md's reason ("The ignore list", "Outside the body"). */
const ALLOWED: Allowed = {
  "/body/stream": "delivery (TRANSPORT_KEYS)",
  "/body/metadata": "bookkeeping (`user_id`)",
  "/body/service_tier": "billing",
  "/body/system/*/cache_control/**": "prompt-caching hint",
  "/body/tools/*/cache_control/**": "prompt-caching hint",
  "/body/messages/*/content/*/cache_control/**": "prompt-caching hint",
  "/body/messages/*/content/*/is_error removed": "`is_error: false` is the API's default: absent and false are one result",
  "/headers/anthropic-version": "selects the wire format, which a hit renders itself",
  "/headers field added": "headers other than the keyed ones are not keyed",
  "/headers/anthropic-dangerous-direct-browser-access": "CORS permission for a browser caller, not read by the model",
};

function keyOf(request: Json): Outcome {
  const { body, headers } = request as { body: unknown; headers: Record<string, unknown> };
  const parsed = messagesRequest.safeParse(body);
  if (!parsed.success) return { invalid: parsed.error.message };
  const h = new Headers(Object.entries(headers ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  const out = keyMessagesRequest(parsed.data, h, "t", "default", undefined, { url: new URL("https://mm.test/v1/messages"), raw: rawOf(request) });
  return out.ok ? { key: out.key.key } : "bypass" in out ? { bypass: out.bypass } : { invalid: out.invalid.message };
}

describe("key fuzzer: Anthropic Messages", () => {
  fuzzSuite({ base, keyOf, allowed: ALLOWED, added: ADDED, documented: [...DOCUMENTED, ...HEADERS], atLeast: 250 });

  it("Should keep the key for the spellings the docs call one (a string or one text block, a tool_use id renamed everywhere, a direct caller)", () => {
    const key = keyOf(base);
    expect(keyOf(setAt(base, ["body", "messages", 4, "content"], [{ type: "text", text: "Go on." }]))).toEqual(key);
    expect(keyOf(setAt(base, ["body", "messages", 2, "content", 0, "content"], [{ type: "text", text: "18C" }]))).toEqual(key);
    const renamed = setAt(
      setAt(base, ["body", "messages", 1, "content", 2, "id"], "toolu_zz"),
      ["body", "messages", 2, "content", 0, "tool_use_id"],
      "toolu_zz",
    );
    expect(keyOf(renamed)).toEqual(key);
    expect(keyOf(setAt(base, ["body", "messages", 1, "content", 2, "caller"], { type: "direct" }))).toEqual(key);
    expect(keyOf(setAt(base, ["body", "system"], [{ type: "text", text: "You are terse." }]))).toEqual(
      keyOf(setAt(base, ["body", "system"], "You are terse.")),
    );
  });

  it("Should keep the key for the allowed fields (the allow-list is honest)", () => {
    const key = keyOf(base);
    // The top-level `cache_control` (automatic prompt caching) is keyed as any field the frame does not name: a miss, never a wrong answer.
    expect(keyOf(setAt(base, ["body", "cache_control"], { type: "ephemeral" }))).not.toEqual(key);
    for (const [at, value] of ADDED.filter(([a]) => /stream|metadata|service_tier|\/cache_control|dangerous/.test(a) && a !== "/body/cache_control"))
      expect(keyOf(setAt(base, pathOf(at), value)), at).toEqual(key);
    expect(keyOf(setAt(base, pathOf("/headers/anthropic-version"), "2024-01-01"))).toEqual(key);
    expect(keyOf(setAt(base, pathOf("/body/system/0/cache_control"), undefined))).toEqual(key);
    expect(keyOf(setAt(base, pathOf("/body/system/0/cache_control/ttl"), "1h"))).toEqual(key);
    expect(keyOf(setAt(base, pathOf("/body/messages/2/content/1/is_error"), undefined))).toEqual(key);
  });
});
