import { describe, expect, it } from "vitest";
import type { KeyOutcome, KeyScope, ProviderAdapter, ProviderKey } from "../../src/cache/provider";
import { messagesAdapter } from "../../src/providers/anthropic/adapter";

/**
 * The key of Anthropic Messages and OpenAI Responses requests with tools:
 * tools whose work the upstream does, or that name a server,
 * are passed through rather than keyed or refused.
 */

const scope: KeyScope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };

/** The h_n of a request keyed through the Messages adapter as the route keys it; the bypass or schema failure otherwise. */
function messages(extra: Record<string, unknown>): string {
  const body = { model: "claude-x", max_tokens: 16, messages: [{ role: "user", content: "hi" }], ...extra };
  const adapter = messagesAdapter as unknown as ProviderAdapter<unknown, ProviderKey, unknown>;
  const parsed = adapter.schema.safeParse(body);
  if (!parsed.success) return `rejected: ${parsed.error.issues[0]?.path.join(".")}`;
  const outcome: KeyOutcome<ProviderKey> = adapter.key(
    { body: parsed.data, raw: JSON.stringify(body), url: new URL("http://mm.test/v1/messages"), headers: new Headers({ "anthropic-version": "2023-06-01" }) },
    scope,
  );
  if (outcome.ok) return outcome.key.key;
  return "bypass" in outcome ? `bypass: ${outcome.bypass}` : `invalid: ${outcome.invalid.message}`;
}

describe("the key: Anthropic server tools are passed through", () => {
  it("Should bypass a request whose tools the upstream runs (web search, web fetch, code execution, tool search, advisor)", () => {
    for (const tool of [
      { type: "web_search_20250305", name: "web_search" },
      { type: "web_fetch_20250910", name: "web_fetch" },
      { type: "code_execution_20250825", name: "code_execution" },
      { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" },
      { type: "advisor_20260301", name: "advisor" },
      { type: "some_future_tool_20990101", name: "future" },
    ]) {
      expect(messages({ tools: [{ name: "f", input_schema: { type: "object" } }, tool] }), tool.type).toBe(`bypass: server-side tool ${tool.type}`);
    }
  });

  it("Should bypass a tool whose type is not a string (the upstream judges it), without reading it as text", () => {
    expect(messages({ tools: [{ name: "f", type: { toString: 1 } }] })).toBe("bypass: server-side tool of a object type");
  });

  it("Should key client tools: custom ones and the Anthropic-defined tools the client runs", () => {
    for (const tool of [
      { name: "f", input_schema: { type: "object" } },
      { type: "custom", name: "f", input_schema: { type: "object" } },
      { type: "bash_20250124", name: "bash" },
      { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
      { type: "computer_20250124", name: "computer", display_width_px: 1024, display_height_px: 768 },
      { type: "memory_20250818", name: "memory" },
    ]) {
      expect(messages({ tools: [tool] }), JSON.stringify(tool)).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  it("Should pass an MCP toolset (a tools entry without a name) through, not refuse it", () => {
    const servers = [{ type: "url", url: "https://mcp.example.com/sse", name: "example" }];
    expect(messages({ mcp_servers: servers, tools: [{ type: "mcp_toolset", mcp_server_name: "example" }] })).toBe("bypass: mcp servers");
    expect(messages({ tools: [{ type: "browser_toolset_20260801" }] })).toMatch(/^[0-9a-f]{32}$/);
  });
});
