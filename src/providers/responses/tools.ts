/**
 * Responses tools the model calls and the client runs: `function` and `custom` (free-form input) tools, and a
 * `namespace` (Codex's group of tools, an MCP server's say) whose tools are all client-run. Every other type
 * (`web_search`, `file_search`, `code_interpreter`, `computer_use_preview`, `mcp`, `image_generation`, any type
 * we do not know) is run by the upstream: a replay cannot stand for its work.
 */
const CLIENT_TOOLS: ReadonlySet<string> = new Set(["function", "custom"]);

/** The type of the first tool the upstream runs (inside a namespace too), or null when the client runs them all. */
export function serverToolOf(tools: ReadonlyArray<{ type?: unknown; tools?: unknown }> | null | undefined): string | null {
  for (const tool of tools ?? []) {
    if (tool?.type === "namespace" && Array.isArray(tool.tools)) {
      const inner = serverToolOf(tool.tools as Array<{ type?: unknown }>);
      if (inner) return inner;
      continue;
    }
    if (typeof tool?.type !== "string" || !CLIENT_TOOLS.has(tool.type)) return typeof tool?.type === "string" ? tool.type : "of no type";
  }
  return null;
}
