import type { CorpusCase } from "./types";

const CHAT = "/v1/chat/completions" as const;
const MSG = "/v1/messages" as const;
const user = { role: "user", content: "hi" };
const ok = { model: "echo-corpus", messages: [user] };
const j = (v: unknown) => JSON.stringify(v);
const chat = (name: string, body: unknown, expect: CorpusCase["expect"] = "reject", headers?: Record<string, string>): CorpusCase => ({
  name: `chat: ${name}`,
  route: CHAT,
  body: typeof body === "string" ? body : j(body),
  expect,
  headers,
});
const deep = (n: number): unknown => {
  let v: unknown = "x";
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const deepObject = (n: number): string => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
const call = (id?: unknown) => ({ ...(id === undefined ? {} : { id }), type: "function", function: { name: "f", arguments: "{}" } });

/** Requests picked by hand: each names one way a client (or an attacker) gets it wrong. */
export const handPicked: CorpusCase[] = [
  // Bad JSON
  chat("empty body", ""),
  chat("whitespace body", "   \n"),
  chat("truncated JSON", '{"model":"m","messages":[{"role":"user","content":"hi"}'),
  chat("trailing comma", '{"model":"m","messages":[],}'),
  chat("single quotes", "{'model':'m'}"),
  chat("NaN literal", '{"model":"m","temperature":NaN,"messages":[{"role":"user","content":"x"}]}'),
  chat("comments", '{"model":"m", /* c */ "messages":[{"role":"user","content":"x"}]}'),
  chat("two documents", `${j(ok)}${j(ok)}`),
  chat("a bare string", '"hello"'),
  chat("a bare number", "42"),
  chat("null", "null"),
  chat("true", "true"),
  chat("an array of requests", j([ok, ok])),
  chat("a byte-order mark before the JSON (accepted or refused, never a 5xx)", `\ufeff${j(ok)}`, "either"),
  chat("unescaped control character in a string", '{"model":"m","messages":[{"role":"user","content":"a\u0001b"}]}'),
  // Wrong types
  chat("model null", { ...ok, model: null }),
  chat("model empty", { ...ok, model: "" }),
  chat("model an object", { ...ok, model: { name: "gpt" } }),
  chat("model an array", { ...ok, model: ["a"] }),
  chat("messages null", { model: "m", messages: null }),
  chat("messages an object", { model: "m", messages: { 0: user } }),
  chat("messages: []", { model: "m", messages: [] }),
  chat("a message that is a string", { model: "m", messages: ["hi"] }),
  chat("a message that is null", { model: "m", messages: [null] }),
  chat("a message without role", { model: "m", messages: [{ content: "x" }] }),
  chat("role a number", { model: "m", messages: [{ role: 1, content: "x" }] }),
  chat("unknown role 'root'", { model: "m", messages: [{ role: "root", content: "x" }] }),
  chat("unknown role 'Assistant' (case)", { model: "m", messages: [{ role: "Assistant", content: "x" }] }),
  chat("unknown role with a NUL", { model: "m", messages: [{ role: "user\u0000", content: "x" }] }),
  chat("user content an object", { model: "m", messages: [{ role: "user", content: { text: "x" } }] }),
  chat("user content null", { model: "m", messages: [{ role: "user", content: null }] }),
  chat("user content missing", { model: "m", messages: [{ role: "user" }] }),
  chat("content part without type", { model: "m", messages: [{ role: "user", content: [{ text: "x" }] }] }),
  chat("content parts not objects", { model: "m", messages: [{ role: "user", content: ["x", 1] }] }),
  chat("stream a string", { ...ok, stream: "true" }),
  chat("stream a number", { ...ok, stream: 1 }),
  chat("n a string", { ...ok, n: "2" }),
  chat("n zero", { ...ok, n: 0 }),
  chat("n negative", { ...ok, n: -1 }),
  chat("n fractional", { ...ok, n: 1.5 }),
  chat("logprobs a string", { ...ok, logprobs: "yes" }),
  chat("tools an object", { ...ok, tools: { type: "function" } }),
  chat("tools entries without type", { ...ok, tools: [{ function: { name: "f" } }] }),
  chat("stream_options a string", { ...ok, stream_options: "include_usage" }),
  chat("modalities a string", { ...ok, modalities: "audio" }),
  // Tool calls and results
  chat("tool call without id", { model: "m", messages: [user, { role: "assistant", tool_calls: [call()] }] }),
  chat("tool call with empty id", { model: "m", messages: [user, { role: "assistant", tool_calls: [call("")] }] }),
  chat("tool call with numeric id", { model: "m", messages: [user, { role: "assistant", tool_calls: [call(7)] }] }),
  chat("tool call without function", { model: "m", messages: [user, { role: "assistant", tool_calls: [{ id: "c1", type: "function" }] }] }),
  chat("tool call arguments an object", {
    model: "m",
    messages: [user, { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: {} } }] }],
  }),
  chat("tool call type not function", { model: "m", messages: [user, { role: "assistant", tool_calls: [{ ...call("c1"), type: "code" }] }] }),
  chat("tool_calls not an array", { model: "m", messages: [user, { role: "assistant", tool_calls: call("c1") }] }),
  chat("tool result without a matching call", { model: "m", messages: [user, { role: "tool", tool_call_id: "nope", content: "r" }] }),
  chat("tool result before its call", {
    model: "m",
    messages: [user, { role: "tool", tool_call_id: "c1", content: "r" }, { role: "assistant", tool_calls: [call("c1")] }],
  }),
  chat("tool result without tool_call_id", { model: "m", messages: [user, { role: "assistant", tool_calls: [call("c1")] }, { role: "tool", content: "r" }] }),
  chat("tool result with empty tool_call_id", {
    model: "m",
    messages: [user, { role: "assistant", tool_calls: [call("c1")] }, { role: "tool", tool_call_id: "", content: "r" }],
  }),
  chat("tool result content a number", {
    model: "m",
    messages: [user, { role: "assistant", tool_calls: [call("c1")] }, { role: "tool", tool_call_id: "c1", content: 5 }],
  }),
  chat("function message without name", { model: "m", messages: [user, { role: "function", content: "x" }] }),
  // Deep nesting and huge values
  chat("messages nested 5,000 deep", { model: "m", messages: deep(5000) }),
  chat("an object nested 10,000 deep", deepObject(10_000)),
  chat("a frame parameter nested 2,000 deep (valid JSON: the upstream judges)", { ...ok, response_format: deep(2000) }, "either"),
  chat("a 1 MB user message (valid: passes through)", { model: "echo-corpus", messages: [{ role: "user", content: "x".repeat(1_000_000) }] }, "either"),
  chat(
    "10,000 tiny messages (valid: passes through)",
    { model: "echo-corpus", messages: Array.from({ length: 10_000 }, () => ({ role: "user", content: "x" })) },
    "either",
  ),
  chat("a 1 MB model name", { model: "m".repeat(1_000_000), messages: [{ role: "tool", tool_call_id: "x", content: "r" }] }),
  // Unicode edge cases
  chat("lone high surrogate (valid JSON escape: passes through)", '{"model":"echo-corpus","messages":[{"role":"user","content":"\\ud800"}]}', "either"),
  chat("lone low surrogate (valid JSON escape: passes through)", '{"model":"echo-corpus","messages":[{"role":"user","content":"a\\udfffb"}]}', "either"),
  chat(
    "lone surrogate in tool arguments (passes through)",
    '{"model":"echo-corpus","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\\"a\\":\\"\\ud800\\"}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}',
    "either",
  ),
  chat(
    "lone surrogate in a frame parameter (passes through)",
    '{"model":"echo-corpus","user":"ok","stop":["\\udc00"],"messages":[{"role":"user","content":"x"}]}',
    "either",
  ),
  chat("NUL in content (passes through)", { model: "echo-corpus", messages: [{ role: "user", content: "a\u0000b" }] }, "either"),
  chat(
    "RTL override and zero-width joiners (passes through)",
    { model: "echo-corpus", messages: [{ role: "user", content: "\u202eevil\u200d\u200b\ufeff" }] },
    "either",
  ),
  chat("emoji ZWJ sequences and combining marks (passes through)", { model: "echo-corpus", messages: [{ role: "user", content: "👩‍👩‍👧‍👦 é é Z͑ͫ̓ͪ̂ͫ̽͏̴̙̤̞͉͚̯̞̠͍" }] }, "either"),
  chat("noncharacters U+FFFE and U+10FFFF (passes through)", { model: "echo-corpus", messages: [{ role: "user", content: "\ufffe\u{10ffff}" }] }, "either"),
  chat(
    "a key '__proto__' in the body (passes through)",
    '{"model":"echo-corpus","__proto__":{"polluted":true},"messages":[{"role":"user","content":"x"}]}',
    "either",
  ),
  chat(
    "constructor/prototype keys in tool arguments (passes through)",
    {
      model: "echo-corpus",
      messages: [
        user,
        {
          role: "assistant",
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: '{"__proto__":{"x":1},"constructor":{"prototype":{}}}' } }],
        },
        { role: "tool", tool_call_id: "c", content: "r" },
      ],
    },
    "either",
  ),
  // Wrong content types
  chat("text/plain", j(ok), "reject", { "content-type": "text/plain" }),
  chat("form-encoded", "model=m", "reject", { "content-type": "application/x-www-form-urlencoded" }),
  chat("multipart", "--b\r\n\r\n--b--", "reject", { "content-type": "multipart/form-data; boundary=b" }),
  chat("application/jsonx", j(ok), "reject", { "content-type": "application/jsonx" }),
  chat("text/json", j(ok), "reject", { "content-type": "text/json" }),
  chat("application/xml", "<model/>", "reject", { "content-type": "application/xml" }),
  // Header injection and malformed muscle-mem-* headers
  chat("namespace with a space", ok, "reject", { "muscle-mem-namespace": "a b" }),
  chat("namespace too long", ok, "reject", { "muscle-mem-namespace": "n".repeat(129) }),
  chat("namespace SQL", ok, "reject", { "muscle-mem-namespace": "x' OR '1'='1" }),
  chat("namespace wildcard", ok, "reject", { "muscle-mem-namespace": "*" }),
  chat("namespace latin-1 bytes", ok, "reject", { "muscle-mem-namespace": "caf\u00e9" }),
  chat("namespace with a tab", ok, "reject", { "muscle-mem-namespace": "a\tb" }),
  chat("namespace with a comma (two headers folded)", ok, "reject", { "muscle-mem-namespace": "a, b" }),
  chat("namespace of quotes", ok, "reject", { "muscle-mem-namespace": '"default"' }),
  chat("namespace with a semicolon", ok, "reject", { "muscle-mem-namespace": "a;b" }),
  chat("bindings not JSON", ok, "reject", { "muscle-mem-bindings": "name=Ada" }),
  chat("bindings a JSON array", ok, "reject", { "muscle-mem-bindings": '["Ada"]' }),
  chat("bindings a JSON string", ok, "reject", { "muscle-mem-bindings": '"Ada"' }),
  chat("bindings null", ok, "reject", { "muscle-mem-bindings": "null" }),
  chat("bindings with a number value", ok, "reject", { "muscle-mem-bindings": '{"n":1}' }),
  chat("bindings with a nested object", ok, "reject", { "muscle-mem-bindings": '{"n":{"a":"b"}}' }),
  chat("bindings truncated", ok, "reject", { "muscle-mem-bindings": '{"name":"Ada"' }),
  // Anthropic route
  { name: "messages: not JSON", route: MSG, body: "{", expect: "reject" },
  { name: "messages: no max_tokens", route: MSG, body: j({ model: "m", messages: [user] }), expect: "reject" },
  { name: "messages: max_tokens zero", route: MSG, body: j({ model: "m", max_tokens: 0, messages: [user] }), expect: "reject" },
  { name: "messages: messages: []", route: MSG, body: j({ model: "m", max_tokens: 5, messages: [] }), expect: "reject" },
  // The API accepts a mid-conversation system message (a beta Claude Code uses): never refused by the cache.
  {
    name: "messages: system role inside messages (passes to the model)",
    route: MSG,
    body: j({ model: "echo-corpus", max_tokens: 5, messages: [{ role: "system", content: "x" }] }),
    expect: "either",
  },
  {
    name: "messages: block without type",
    route: MSG,
    body: j({ model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ text: "x" }] }] }),
    expect: "reject",
  },
  { name: "messages: tools without names", route: MSG, body: j({ model: "m", max_tokens: 5, messages: [user], tools: [{}] }), expect: "reject" },
  {
    name: "messages: text/plain",
    route: MSG,
    body: j({ model: "m", max_tokens: 5, messages: [user] }),
    headers: { "content-type": "text/plain" },
    expect: "reject",
  },
  {
    name: "messages: bad namespace",
    route: MSG,
    body: j({ model: "m", max_tokens: 5, messages: [user] }),
    headers: { "muscle-mem-namespace": "../x y" },
    expect: "reject",
  },
  { name: "messages: deep nesting", route: MSG, body: deepObject(10_000), expect: "reject" },
  {
    name: "messages: lone surrogate in a text block (passes through)",
    route: MSG,
    body: '{"model":"echo-corpus","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"\\udfff"}]}]}',
    expect: "either",
  },
  {
    name: "messages: lone surrogate in the system prompt (passes through)",
    route: MSG,
    body: '{"model":"echo-corpus","max_tokens":5,"system":"\\ud83d","messages":[{"role":"user","content":"hi"}]}',
    expect: "either",
  },
  // Methods
  { name: "chat: PUT", route: CHAT, method: "PUT", body: j(ok), expect: "reject" },
  { name: "chat: DELETE", route: CHAT, method: "DELETE", body: "", expect: "reject" },
  { name: "messages: PATCH", route: MSG, method: "PATCH", body: j(ok), expect: "reject" },
];
