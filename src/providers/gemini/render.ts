import type { StoredAnswer } from "../../core/answer";
import { NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { compactJson } from "../../core/exact-json";
import { isSpellings, spelledJson } from "../../core/spelled-json";
import { LAYOUT_KEY, plannedChunks } from "./layout";
import { CANDIDATE_KEY, storedGeminiAnswer, type CanonicalPart } from "./schema";
import { RECORDED_METADATA } from "./stream";

/** A recorded Gemini answer, validated for rendering. */
export interface GeminiAnswer {
  hash: string;
  parts: CanonicalPart[];
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  /** The candidate's recorded metadata (`safetyRatings`, `citationMetadata`, `finishMessage`), served as sent; empty when none was recorded. */
  metadata: Record<string, unknown>;
  /** How the metadata's numbers were written where JSON.stringify would write them otherwise (pointers from the candidate). */
  numbers: Spelling[];
  /** How a streamed recording was cut into chunks (src/providers/gemini/layout.ts); undefined for a JSON one. */
  layout?: unknown;
}

const validated = new WeakMap<StoredAnswer, GeminiAnswer | null>();

/** Reads a stored answer as a Gemini model content; null when the node holds something else. */
export function geminiAnswerOf(answer: StoredAnswer): GeminiAnswer | null {
  const known = validated.get(answer);
  if (known !== undefined) return known;
  const parsed = storedGeminiAnswer.safeParse(answer.message as unknown);
  const { hash, finishReason, promptTokens, completionTokens } = answer;
  let result: GeminiAnswer | null = null;
  if (parsed.success) {
    const { [LAYOUT_KEY]: layout, [NUMBERS_KEY]: spelled, ...recorded } = parsed.data[CANDIDATE_KEY] ?? {};
    // Only the candidate metadata a recording keeps: an imported field such as `content` never reaches the candidate.
    const metadata = Object.fromEntries(Object.entries(recorded).filter(([field]) => RECORDED_METADATA.includes(field)));
    const numbers = isSpellings(spelled) ? spelled : [];
    result = { hash, parts: parsed.data.parts as CanonicalPart[], finishReason, promptTokens, completionTokens, metadata, numbers, layout };
  }
  validated.set(answer, result);
  return result;
}

type Served = Record<string, unknown>;

/**
 * The parts as served: function-call args as recorded (none when the model sent none), recorded call ids replaced
 * by fresh ones. Args that JSON.stringify would write otherwise than recorded (`1.0`, 20 digits, an integer-like
 * key after another: src/providers/gemini/args-text.ts) go into `written` with their text, which the caller writes.
 */
function servedParts(answer: GeminiAnswer, written?: Map<object, string>): Served[] {
  let calls = 0;
  return answer.parts.map((p) => {
    if (!("functionCall" in p)) return { ...p };
    const { functionCall: raw, ...rest } = p;
    // The stored form is validated by storedGeminiAnswer: a function call with its args as JSON text.
    const functionCall = raw as { name: string; id?: string; argsJson?: string };
    const call: Served = { name: functionCall.name };
    if (functionCall.argsJson !== undefined) {
      const args = JSON.parse(functionCall.argsJson) as unknown;
      call.args = args;
      // An imported text may be spaced: a streamed event is one line.
      if (written && typeof args === "object" && args !== null && JSON.stringify(args) !== functionCall.argsJson)
        written.set(args, compactJson(functionCall.argsJson));
    }
    if (functionCall.id !== undefined) call.id = `call_mm${answer.hash.slice(0, 24)}${(calls++).toString(36)}`;
    return { ...rest, functionCall: call };
  });
}

function usageOf(answer: GeminiAnswer): Served {
  return {
    promptTokenCount: answer.promptTokens,
    candidatesTokenCount: answer.completionTokens,
    totalTokenCount: answer.promptTokens + answer.completionTokens,
  };
}

export interface GeminiRenderContext {
  model: string;
  responseId: string;
}

/** The spellings of a candidate's metadata as pointers from a response or chunk (its candidate 0). */
const onCandidate = (numbers: readonly Spelling[]): Spelling[] => numbers.map(([pointer, text]) => [`/candidates/0${pointer}`, text]);

/** A served answer as a `GenerateContentResponse` (the recorded metadata on the candidate), its text: the metadata's numbers as recorded. */
export function renderGenerateContentJson(answer: GeminiAnswer, ctx: GeminiRenderContext): string {
  const written = new Map<object, string>();
  return spelledJson(renderGenerateContent(answer, ctx, written), onCandidate(answer.numbers), written);
}

/** A served answer as a `GenerateContentResponse` (the recorded metadata on the candidate); `written` as servedParts fills it. */
export function renderGenerateContent(answer: GeminiAnswer, ctx: GeminiRenderContext, written?: Map<object, string>): Served {
  return {
    candidates: [{ content: { role: "model", parts: servedParts(answer, written) }, finishReason: answer.finishReason, ...answer.metadata, index: 0 }],
    usageMetadata: usageOf(answer),
    modelVersion: ctx.model,
    responseId: ctx.responseId,
  };
}

const sse = (chunk: Served, numbers: readonly Spelling[], written: ReadonlyMap<object, string>): string =>
  `data: ${spelledJson(chunk, onCandidate(numbers), written)}\r\n\r\n`;

/**
 * A served answer as `streamGenerateContent?alt=sse`. A streamed recording is cut into the chunks the
 * model sent, each with its own finish reason and candidate metadata (src/providers/gemini/layout.ts);
 * any other, one chunk per part, the last with the finish reason and the recorded metadata, the
 * safety ratings on every chunk, as Gemini streams them. Usage on the last chunk.
 */
export function renderGenerateContentStream(answer: GeminiAnswer, ctx: GeminiRenderContext): string {
  const written = new Map<object, string>();
  const parts = servedParts(answer, written);
  const planned = answer.layout === undefined ? null : plannedChunks(answer.layout, parts, answer.finishReason);
  if (planned) {
    return planned
      .map((c, i) => {
        const chunk: Served = {};
        if (c.candidate) {
          const candidate: Served = c.parts === null ? {} : { content: { role: "model", parts: c.parts } };
          if (c.finishReason !== undefined) candidate.finishReason = c.finishReason;
          chunk.candidates = [{ ...candidate, ...c.metadata, index: 0 }];
        }
        Object.assign(chunk, { modelVersion: ctx.model, responseId: ctx.responseId });
        if (i === planned.length - 1) chunk.usageMetadata = usageOf(answer);
        return sse(chunk, c.candidate ? (c.numbers ?? []) : [], written);
      })
      .join("");
  }
  const { safetyRatings } = answer.metadata;
  return parts
    .map((p, i) => {
      const last = i === parts.length - 1;
      const candidate: Served = { content: { role: "model", parts: [p] }, index: 0 };
      if (last) Object.assign(candidate, { finishReason: answer.finishReason }, answer.metadata);
      else if (safetyRatings !== undefined) candidate.safetyRatings = safetyRatings;
      const chunk: Served = { candidates: [candidate], modelVersion: ctx.model, responseId: ctx.responseId };
      if (last) chunk.usageMetadata = usageOf(answer);
      return sse(chunk, answer.numbers, written);
    })
    .join("");
}
