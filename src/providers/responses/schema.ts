import { z } from "zod";

/** One item of `input`, as far as the cache needs to know it; the canonical form decides what is cacheable. */
export const inputItem = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
});

export type InputItem = z.infer<typeof inputItem>;

/** The body of `POST /v1/responses`; unknown fields pass through (and are keyed). */
export const responsesRequest = z.looseObject({
  model: z.string().min(1, "model must be a non-empty string").optional(),
  input: z.union([z.string(), z.array(inputItem).min(1, "input must contain at least one item")]),
  instructions: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  include: z.array(z.string()).nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  background: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  conversation: z.unknown().optional(),
  prompt: z.unknown().optional(),
  top_logprobs: z.number().nullish(),
});

export type ResponsesRequest = z.infer<typeof responsesRequest>;

/** A text part in canonical form (`input_text` and `output_text` alike: the role says which). */
export interface CanonicalText {
  type: "text";
  text: string;
}

export interface CanonicalRefusal {
  type: "refusal";
  refusal: string;
}

/** An assistant output item in canonical form; `extra` fields a model reads are kept beside. */
export type CanonicalOutputItem =
  | { type: "reasoning"; [field: string]: unknown }
  | { type: "message"; content: Array<CanonicalText | CanonicalRefusal>; [extra: string]: unknown }
  | { type: "function_call"; call_id: string; name: string; arguments: string; [extra: string]: unknown }
  | { type: "custom_tool_call"; call_id: string; name: string; input: string; [extra: string]: unknown };

/**
 * One node of a Responses conversation: a user/system/developer message, the
 * run of output items one response produced (`assistant`), the output of
 * one function or custom tool call (`tool`, its `call_id` an ordinal; `custom: true` for a custom tool's),
 * or tools added mid-conversation (`tools`: Codex's `additional_tools` input item).
 */
export type ResponsesNode =
  | { role: "user" | "system" | "developer"; content: CanonicalText[]; [extra: string]: unknown }
  | { role: "assistant"; items: CanonicalOutputItem[] }
  | { role: "tool"; call_id: string; output: string | string[]; [extra: string]: unknown }
  | { role: "tools"; tools: unknown[]; [extra: string]: unknown };

const text = z.object({ type: z.literal("text"), text: z.string() });
const refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });

/** Validates a stored answer node before it is rendered (a node of another API fails here). */
export const storedResponsesAnswer = z.object({
  role: z.literal("assistant"),
  items: z
    .array(
      z.union([
        z.looseObject({ type: z.literal("reasoning") }),
        z.looseObject({ type: z.literal("message"), content: z.array(z.union([text, refusal])) }),
        z.looseObject({ type: z.literal("function_call"), call_id: z.string(), name: z.string(), arguments: z.string() }),
        z.looseObject({ type: z.literal("custom_tool_call"), call_id: z.string(), name: z.string(), input: z.string() }),
      ]),
    )
    // A response always outputs something: an answer with no item is a damaged row (a hit would serve an empty output).
    .min(1),
});
