import { z } from "zod";
import type { StoredAnswer } from "../../core/answer";

/** A stored function object (a tool call's `function`, a legacy `function_call`): what render reads of it. */
const storedFunction = z.looseObject({ name: z.string(), arguments: z.string() });

/**
 * A chat answer as the renderer reads it: an assistant message whose content is
 * text (a string, text parts as strings, or none) and whose calls name a function
 * with its arguments as text. Other fields are served as recorded.
 */
const storedChatAnswer = z.looseObject({
  role: z.literal("assistant"),
  content: z.union([z.string(), z.array(z.string()), z.null()]).optional(),
  refusal: z.string().nullable().optional(),
  tool_calls: z
    .array(z.looseObject({ function: storedFunction }))
    .nullable()
    .optional(),
  function_call: storedFunction.nullable().optional(),
});

const validated = new WeakMap<StoredAnswer, StoredAnswer | null>();

/**
 * A stored answer as a chat completion can serve it; null when the node holds
 * something else (a damaged row, another API's answer through an import, an
 * older shape): the request then misses and goes to the model, never served a
 * guess and never a 500. Memoised per answer object (a warm hit reads the same one).
 */
export function chatAnswerOf(answer: StoredAnswer): StoredAnswer | null {
  const known = validated.get(answer);
  if (known !== undefined) return known;
  const result = storedChatAnswer.safeParse(answer.message as unknown).success ? answer : null;
  validated.set(answer, result);
  return result;
}
