import { canonicalJson } from "../canonical";
import { onlyFields } from "../fields";
import { JsonEventStream } from "../json-event-stream";
import type { Part } from "./schema";

/** One `GenerateContentResponse` chunk, as far as the reader needs it. */
export interface GeminiChunk {
  candidates?: Array<{ content?: { role?: string; parts?: Part[] }; finishReason?: string; index?: number; [field: string]: unknown }>;
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number } | null;
  promptFeedback?: { blockReason?: string } | null;
  error?: unknown;
  [field: string]: unknown;
}

/** What a complete answer assembles into: the model's content, its finish reason, usage and the candidate's recorded metadata. */
export interface GeminiAssembled {
  content: { role: string; parts: Part[] };
  finishReason: string;
  usage: GeminiChunk["usageMetadata"];
  metadata: Record<string, unknown>;
}

/**
 * The response fields a hit sends (its own `modelVersion`, `responseId`, the recorded usage) or that
 * say nothing about the answer (Vertex's `createTime`). Any other (`promptFeedback`, …) would be
 * dropped by a replay, so the answer is not recorded.
 */
const RESPONSE_FIELDS: ReadonlySet<string> = new Set(["candidates", "usageMetadata", "modelVersion", "responseId", "createTime"]);

/**
 * Candidate metadata recorded with the answer and served as the model sent it (src/cache/gemini/render.ts):
 * the safety ratings, citations and finish message of the answer. A stream whose chunks send one of
 * them with different values cannot be served back as sent and is not recorded.
 */
export const RECORDED_METADATA: readonly string[] = ["safetyRatings", "citationMetadata", "finishMessage"];

/**
 * The candidate fields a hit renders, and `avgLogprobs`: a statistic of the generation, like the usage
 * details, that a hit does not report. Any other (`groundingMetadata`, `logprobsResult`,
 * `urlContextMetadata`, `tokenCount`, …) is part of what the model answered and a replay would drop
 * it: such an answer is not recorded.
 */
const CANDIDATE_FIELDS: ReadonlySet<string> = new Set(["content", "finishReason", "index", "avgLogprobs", ...RECORDED_METADATA]);

/** The recorded metadata of one candidate (null values left out). */
function metadataOf(candidate: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of RECORDED_METADATA) if (candidate[field] !== undefined && candidate[field] !== null) out[field] = candidate[field];
  return out;
}

/** Whether a response (or one streamed chunk) holds only what a replay sends back. */
function replayable(response: GeminiChunk): boolean {
  return onlyFields(response, RESPONSE_FIELDS) && (response.candidates ?? []).every((c) => onlyFields(c, CANDIDATE_FIELDS));
}

/** The answer in one JSON response; null when it is not one complete candidate a replay can serve whole. */
export function assembledOf(response: GeminiChunk): GeminiAssembled | null {
  const candidates = response.candidates ?? [];
  if (candidates.length !== 1 || response.promptFeedback?.blockReason || !candidates[0].finishReason || !replayable(response)) return null;
  const content = candidates[0].content;
  return { content: { role: content?.role ?? "model", parts: content?.parts ?? [] }, finishReason: candidates[0].finishReason, usage: response.usageMetadata, metadata: metadataOf(candidates[0]) };
}

/**
 * Assembles `streamGenerateContent?alt=sse` from raw bytes cut anywhere: the
 * parts of every chunk in order, consecutive plain text parts joined into
 * one (as the JSON answer carries them). Null unless a chunk carried a
 * finish reason and none carried an error, a block, another candidate or a
 * field a replay would drop.
 */
export class GeminiStreamReader extends JsonEventStream<GeminiChunk> {
  private readonly parts: Part[] = [];
  private role = "model";
  private finishReason: string | null = null;
  private usage: GeminiChunk["usageMetadata"] = null;
  private readonly metadata: Record<string, unknown> = {};

  protected onEvent(chunk: GeminiChunk): void {
    if (chunk.error || chunk.promptFeedback?.blockReason || (chunk.candidates?.length ?? 0) > 1 || !replayable(chunk)) {
      this.failed = true;
      return;
    }
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    const candidate = chunk.candidates?.[0];
    if (!candidate) return;
    if (candidate.content?.role) this.role = candidate.content.role;
    for (const p of candidate.content?.parts ?? []) this.add(p);
    if (candidate.finishReason) this.finishReason = candidate.finishReason;
    for (const [field, value] of Object.entries(metadataOf(candidate))) {
      // A hit sends one value: a stream that changes it on the way is not served back as sent.
      if (field in this.metadata && canonicalJson(this.metadata[field]) !== canonicalJson(value)) this.failed = true;
      this.metadata[field] = value;
    }
  }

  private add(p: Part): void {
    const previous = this.parts[this.parts.length - 1];
    const plainText = typeof p.text === "string" && Object.keys(p).length === 1;
    if (plainText && previous && typeof previous.text === "string" && Object.keys(previous).every((k) => k === "text" || k === "thoughtSignature")) {
      this.parts[this.parts.length - 1] = { ...previous, text: `${String(previous.text)}${String(p.text)}` };
    } else {
      this.parts.push({ ...p });
    }
  }

  result(): GeminiAssembled | null {
    this.end();
    if (this.failed || !this.finishReason) return null;
    return { content: { role: this.role, parts: this.parts }, finishReason: this.finishReason, usage: this.usage, metadata: this.metadata };
  }
}
