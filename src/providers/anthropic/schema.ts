import { z } from "zod";
import { isCustomTool } from "./tools";
import { isJsonText } from "../../core/json-text";

/** A content block as Anthropic accepts it; the canonical form decides which types are cacheable. */
export const contentBlock = z.looseObject({ type: z.string().min(1, "content blocks need a type") });

export type ContentBlock = z.infer<typeof contentBlock>;

const content = z.union([z.string(), z.array(contentBlock)]);

/**
 * One message of a Messages API conversation. The role is any string: the API (with a beta) accepts more than
 * `user` and `assistant` (Claude Code sends a `system` message mid-conversation), and a cache must never refuse
 * what the provider may accept: the canonical form keys the roles it knows and passes the others through.
 */
export const anthropicMessage = z.looseObject({
  role: z.string(),
  content,
});

export type AnthropicMessage = z.infer<typeof anthropicMessage>;

/** The body of `POST /v1/messages`, as far as the cache needs to know it; unknown fields pass through. */
export const messagesRequest = z.looseObject({
  model: z.string().min(1, "model must be a non-empty string"),
  max_tokens: z.number().int().positive("max_tokens must be a positive integer"),
  messages: z.array(anthropicMessage).min(1, "messages must contain at least one message"),
  system: z.union([z.string(), z.array(contentBlock)]).optional(),
  /** Tools as sent; a custom tool (no `type`, or `custom`) needs a `name`, a toolset (`mcp_toolset`, `browser_toolset_…`) has none. */
  tools: z
    .array(
      z.looseObject({ name: z.string().optional() }).refine((tool) => typeof tool.name === "string" || !isCustomTool(tool.type), {
        message: "a custom tool needs a name",
        path: ["name"],
      }),
    )
    .optional(),
  tool_choice: z.looseObject({ type: z.string() }).optional(),
  stream: z.boolean().optional(),
  thinking: z.looseObject({ type: z.string() }).optional(),
  /** Server-side conversation state (message threads): the Worker cannot see the whole conversation. */
  thread: z.unknown().optional(),
  container: z.unknown().optional(),
});

export type MessagesRequest = z.infer<typeof messagesRequest>;

/** A text block in canonical form; fields the cache does not read are kept as sent (keyed). */
export interface CanonicalText {
  type: "text";
  text: string;
  [field: string]: unknown;
}

/**
 * A tool call in canonical form: the id is an ordinal (`toolu_0`, `toolu_1`, …).
 * A stored answer also keeps `input_json`, the input as the model wrote it
 * (key order, spacing): a replay serves that text, the hash never reads it.
 */
export interface CanonicalToolUse {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  input_json?: string;
  [field: string]: unknown;
}

/** A tool result in canonical form: its id is the ordinal of the call it answers, its content text blocks. */
export interface CanonicalToolResult {
  type: "tool_result";
  tool_use_id: string;
  content: CanonicalText[];
  is_error?: true;
  [field: string]: unknown;
}

/** A thinking block (extended or adaptive thinking): its text and signature, keyed and served as the model sent them. */
export interface CanonicalThinking {
  type: "thinking";
  thinking: string;
  signature: string;
  [field: string]: unknown;
}

/** A redacted thinking block: its encrypted `data`, keyed and served as sent. */
export interface CanonicalRedactedThinking {
  type: "redacted_thinking";
  data: string;
  [field: string]: unknown;
}

export type CanonicalBlock = CanonicalText | CanonicalToolUse | CanonicalToolResult | CanonicalThinking | CanonicalRedactedThinking;

/** The message roles the cache keys: `system` is a mid-conversation system message (a beta Claude Code uses). */
export const KEYED_ROLES = ["user", "assistant", "system"] as const;

export type KeyedRole = (typeof KEYED_ROLES)[number];

/** An Anthropic message in canonical form: what is hashed and stored as a node. */
export interface AnthropicCanonicalMessage {
  role: KeyedRole;
  content: CanonicalBlock[];
  [field: string]: unknown;
}

const canonicalText = z.object({ type: z.literal("text"), text: z.string() });

/**
 * Validates a stored node's message before it is rendered (a node of another API fails here). An answer's
 * blocks keep the fields the model sent them with (null ones: `citations: null`), served back as stored.
 */
export const storedAnthropicMessage = z.object({
  role: z.enum(KEYED_ROLES),
  content: z.array(
    z.discriminatedUnion("type", [
      z.looseObject({ type: z.literal("text"), text: z.string() }),
      z.looseObject({
        type: z.literal("tool_use"),
        id: z.string(),
        name: z.string(),
        input: z.unknown(),
        // A hit parses it: text that is not JSON (a damaged row) fails here, never in the render.
        input_json: z.string().refine(isJsonText).optional(),
        caller: z.object({ type: z.literal("direct") }).optional(),
      }),
      z.object({ type: z.literal("tool_result"), tool_use_id: z.string(), content: z.array(canonicalText), is_error: z.literal(true).optional() }),
      z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() }),
      z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() }),
    ]),
  ),
});
