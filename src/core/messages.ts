import { z } from "zod";
import { withShallowCheck } from "./body";
import { isPlainChatRequest } from "./messages-check";

/** A content part as OpenAI accepts it. Only text (and assistant refusal) parts are cacheable. */
const contentPart = z.looseObject({ type: z.string() });

const toolCall = z.looseObject({
  id: z.string().min(1, "tool_calls[].id must be a non-empty string"),
  type: z.literal("function").optional(),
  function: z.looseObject({
    name: z.string(),
    arguments: z.string(),
  }),
});

/** A call of a custom (free-form) tool: valid history, never cacheable (src/core/canonical.ts bypasses it). */
const customToolCall = z.looseObject({
  id: z.string().min(1, "tool_calls[].id must be a non-empty string"),
  type: z.literal("custom"),
  custom: z.looseObject({ name: z.string(), input: z.string() }),
});

const content = z.union([z.string(), z.array(contentPart), z.null()]).optional();

/** A legacy `function_call` (before tools): name and arguments text. */
const functionCall = z.looseObject({ name: z.string(), arguments: z.string() });

/** One chat message, validated for the fields the cache reads; unknown fields pass through. */
export const chatMessage = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: z.union([z.string(), z.array(contentPart)]), name: z.string().optional() }),
  z.looseObject({ role: z.literal("developer"), content: z.union([z.string(), z.array(contentPart)]), name: z.string().optional() }),
  z.looseObject({ role: z.literal("user"), content: z.union([z.string(), z.array(contentPart)]), name: z.string().optional() }),
  z.looseObject({
    role: z.literal("assistant"),
    content,
    name: z.string().optional(),
    refusal: z.string().nullable().optional(),
    tool_calls: z
      .array(z.union([toolCall, customToolCall]))
      .nullable()
      .optional(),
    function_call: functionCall.nullable().optional(),
  }),
  z.looseObject({ role: z.literal("tool"), content: z.union([z.string(), z.array(contentPart)]), tool_call_id: z.string().min(1) }),
  z.looseObject({ role: z.literal("function"), content: z.string().nullable(), name: z.string() }),
]);

export type ChatMessage = z.infer<typeof chatMessage>;
export type ToolCall = z.infer<typeof toolCall>;
export type FunctionCall = z.infer<typeof functionCall>;

/**
 * The body of `POST /v1/chat/completions`, as far as the cache needs to know it. A body in the common
 * shapes is checked shallowly, not walked by zod (src/core/messages-check.ts).
 */
export const chatRequest = withShallowCheck(
  z.looseObject({
    model: z.string().min(1, "model must be a non-empty string"),
    messages: z.array(chatMessage).min(1, "messages must contain at least one message"),
    stream: z.boolean().nullable().optional(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
    n: z.number().int().positive().nullable().optional(),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: z.number().int().nullable().optional(),
    modalities: z.array(z.string()).nullable().optional(),
    tools: z
      .array(z.looseObject({ type: z.string() }))
      .nullable()
      .optional(),
  }),
  isPlainChatRequest,
);

export type ChatRequest = z.infer<typeof chatRequest>;

/** A tool call in canonical form: ids are ordinals (`call_0`, `call_1`, …), arguments canonical JSON. */
export interface CanonicalToolCall {
  id: string;
  type: "function";
  function: FunctionCall;
  [field: string]: unknown;
}

/**
 * A message in canonical form: what is hashed and what is stored. Fields the
 * cache does not read are kept as sent (`prefix`, `reasoning_content`, …).
 * The hash form holds no null values; an answer's stored form may hold
 * `content: null`, `refusal: null`, `annotations: []` as the model sent them.
 */
export interface CanonicalMessage {
  role: string;
  content?: string | string[] | null;
  name?: string;
  refusal?: string | null;
  tool_calls?: CanonicalToolCall[];
  function_call?: FunctionCall;
  annotations?: unknown[];
  tool_call_id?: string;
  [field: string]: unknown;
}
