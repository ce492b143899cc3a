/**
 * Anthropic tools the client runs: custom tools (no `type`, or `custom`) and
 * the Anthropic-defined tools whose `tool_use` the client executes (bash, the
 * text editor, computer use, memory, the browser and computer toolsets).
 * Every other type (web search, web fetch, code execution, tool search, the
 * advisor, any type we do not know) is run by the upstream: its answer depends
 * on work or live data the cache cannot replay, and an answer that used it is
 * never recorded, so caching the request would only ever keep the answers
 * that did not use it.
 */
const CLIENT_TOOL_PREFIXES = ["bash_", "text_editor_", "computer_", "memory_", "browser_toolset_"] as const;

/** A tool the client defines itself (no `type`, or `custom`): it needs a `name` and an `input_schema`. */
export function isCustomTool(type: unknown): boolean {
  return type === undefined || type === null || type === "custom";
}

function isClientTool(type: unknown): boolean {
  if (isCustomTool(type)) return true;
  return typeof type === "string" && CLIENT_TOOL_PREFIXES.some((prefix) => type.startsWith(prefix));
}

/** The type of the first tool the upstream runs, or null when the client runs them all. */
export function serverToolOf(tools: readonly Readonly<Record<string, unknown>>[] | undefined): string | null {
  const server = tools?.find((tool) => !isClientTool(tool.type));
  if (!server) return null;
  return typeof server.type === "string" ? server.type : `of a ${typeof server.type} type`;
}
