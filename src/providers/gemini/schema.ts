import { z } from "zod";
import { isJsonText } from "../../core/json-text";

/** One part of a Gemini content, as far as the cache needs to know it; the canonical form decides what is cacheable. */
export const part = z.looseObject({});

export type Part = z.infer<typeof part>;

/** One turn of a Gemini conversation (`role` is `user` or `model`; absent means `user`). */
export const content = z.looseObject({
  role: z.string().optional(),
  parts: z.array(part),
});

export type Content = z.infer<typeof content>;

/** The body of `generateContent` / `streamGenerateContent`; unknown fields pass through (and are keyed). */
export const generateContentRequest = z.looseObject({
  contents: z.array(content).min(1, "contents must contain at least one content"),
  systemInstruction: content.partial({ parts: true }).nullish(),
  tools: z.array(z.looseObject({})).nullish(),
  toolConfig: z.looseObject({}).nullish(),
  generationConfig: z.looseObject({ candidateCount: z.number().nullish() }).nullish(),
  cachedContent: z.string().nullish(),
});

export type GenerateContentRequest = z.infer<typeof generateContentRequest>;

/** A canonical part: text, a function call (args kept twice: canonical to hash, as sent to serve), or a function response. */
export type CanonicalPart =
  | { text: string; [extra: string]: unknown }
  | { functionCall: { name: string; id?: string; args?: unknown; argsJson?: string }; [extra: string]: unknown }
  | { functionResponse: { name: string; id?: string; response: unknown }; [extra: string]: unknown };

/** A Gemini content in canonical form: what is hashed and stored as a node. */
export interface GeminiNode {
  role: "user" | "model";
  parts: CanonicalPart[];
}

/**
 * The key of a stored answer node that holds its candidate's metadata as the model sent it
 * (`safetyRatings`, `citationMetadata`, `finishMessage`): stored with the answer, never hashed.
 */
export const CANDIDATE_KEY = "muscle-mem:candidate";

/** Validates a stored answer node before it is rendered (a node of another API fails here). */
export const storedGeminiAnswer = z.object({
  role: z.literal("model"),
  [CANDIDATE_KEY]: z.record(z.string(), z.unknown()).optional(),
  parts: z
    .array(
      z.union([
        z.looseObject({ text: z.string() }),
        z.looseObject({ functionCall: z.object({ name: z.string(), id: z.string().optional(), argsJson: z.string().refine(isJsonText).optional() }) }),
      ]),
    )
    .min(1),
});
