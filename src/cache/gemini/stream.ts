import { JsonEventStream } from "../json-event-stream";
import type { Part } from "./schema";

/** One `GenerateContentResponse` chunk, as far as the reader needs it. */
export interface GeminiChunk {
  candidates?: Array<{ content?: { role?: string; parts?: Part[] }; finishReason?: string; index?: number }>;
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number } | null;
  promptFeedback?: { blockReason?: string } | null;
  error?: unknown;
}

/** What a complete answer assembles into: the model's content, its finish reason and usage. */
export interface GeminiAssembled {
  content: { role: string; parts: Part[] };
  finishReason: string;
  usage: GeminiChunk["usageMetadata"];
}

/** The answer in one JSON response; null when it is not one complete candidate. */
export function assembledOf(response: GeminiChunk): GeminiAssembled | null {
  const candidates = response.candidates ?? [];
  if (candidates.length !== 1 || response.promptFeedback?.blockReason || !candidates[0].finishReason) return null;
  const content = candidates[0].content;
  return { content: { role: content?.role ?? "model", parts: content?.parts ?? [] }, finishReason: candidates[0].finishReason, usage: response.usageMetadata };
}

/**
 * Assembles `streamGenerateContent?alt=sse` from raw bytes cut anywhere: the
 * parts of every chunk in order, consecutive plain text parts joined into
 * one (as the JSON answer carries them). Null unless a chunk carried a
 * finish reason and none carried an error, a block or another candidate.
 */
export class GeminiStreamReader extends JsonEventStream<GeminiChunk> {
  private readonly parts: Part[] = [];
  private role = "model";
  private finishReason: string | null = null;
  private usage: GeminiChunk["usageMetadata"] = null;

  protected onEvent(chunk: GeminiChunk): void {
    if (chunk.error || chunk.promptFeedback?.blockReason || (chunk.candidates?.length ?? 0) > 1) {
      this.failed = true;
      return;
    }
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    const candidate = chunk.candidates?.[0];
    if (!candidate) return;
    if (candidate.content?.role) this.role = candidate.content.role;
    for (const p of candidate.content?.parts ?? []) this.add(p);
    if (candidate.finishReason) this.finishReason = candidate.finishReason;
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
    return { content: { role: this.role, parts: this.parts }, finishReason: this.finishReason, usage: this.usage };
  }
}
