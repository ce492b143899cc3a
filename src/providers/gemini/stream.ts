import { canonicalJson } from "../../core/canonical";
import { onlyFields } from "../../core/fields";
import { JsonEventStream } from "../../core/json-event-stream";
import { bodySpellings, NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { fieldOf } from "../../core/spelled-json";
import { callArgsTexts } from "./args-text";
import { isPlainText, WHOLE, type ChunkLayout } from "./layout";
import type { Part } from "./schema";

/** One `GenerateContentResponse` chunk, as far as the reader needs it. */
export interface GeminiChunk {
  candidates?: Array<{ content?: { role?: string; parts?: Part[] }; finishReason?: string; index?: number; [field: string]: unknown }>;
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number } | null;
  promptFeedback?: { blockReason?: string } | null;
  error?: unknown;
  [field: string]: unknown;
}

/** What a complete answer assembles into: the model's content, its finish reason, usage, the candidate's recorded metadata and, streamed, how its chunks were cut. */
export interface GeminiAssembled {
  content: { role: string; parts: Part[] };
  finishReason: string;
  usage: GeminiChunk["usageMetadata"];
  metadata: Record<string, unknown>;
  chunks?: ChunkLayout[];
  /** Streamed: each call's args as its chunk wrote them (src/providers/gemini/args-text.ts). */
  argsTexts?: Array<string | undefined>;
}

/**
 * The response fields a hit sends (its own `modelVersion`, `responseId`, the recorded usage) or that
 * say nothing about the answer (Vertex's `createTime`). Any other (`promptFeedback`, …) would be
 * dropped by a replay, so the answer is not recorded.
 */
const RESPONSE_FIELDS: ReadonlySet<string> = new Set(["candidates", "usageMetadata", "modelVersion", "responseId", "createTime"]);

/**
 * Candidate metadata recorded with the answer and served as the model sent it (src/providers/gemini/render.ts):
 * the safety ratings, citations and finish message of the answer. Streamed, each chunk's values are
 * recorded with the chunk (src/providers/gemini/layout.ts) and a JSON hit carries the last value of each
 * (all the citation sources, when they are only sources).
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

/**
 * The numbers of candidate 0's recorded metadata written otherwise than JSON.stringify would (`0.10`,
 * `1e-05`), pointers from the candidate, read from the response's (or chunk's) text: a hit writes them so
 * (src/core/spelled-json.ts). None in the common case (one regex test).
 */
export function metadataSpellings(text: string, metadata: Record<string, unknown>): Spelling[] {
  const spelled = bodySpellings(text, "candidates")?.items.get(0) ?? [];
  return spelled.filter(([pointer]) => Object.hasOwn(metadata, fieldOf(pointer)));
}

/** `metadata` with its spellings (under NUMBERS_KEY) when it has any. */
export function withSpellings(metadata: Record<string, unknown>, spelled: readonly Spelling[]): Record<string, unknown> {
  return spelled.length > 0 ? { ...metadata, [NUMBERS_KEY]: spelled } : metadata;
}

/**
 * The candidate metadata a JSON hit of a streamed answer carries: the last value of each field the
 * chunks sent, and every citation source when citations came on several chunks (each chunk's own
 * is served with it on a streamed hit). Null when citations changed in a way that is not a list of
 * sources: the JSON form would drop some.
 */
function joinedMetadata(seen: ReadonlyArray<Record<string, unknown>>, spellings: ReadonlyArray<readonly Spelling[]>): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  // Each field's numbers as the chunk whose value the JSON form keeps wrote them.
  const spelledBy = new Map<string, readonly Spelling[]>();
  seen.forEach((metadata, i) => {
    Object.assign(out, metadata);
    for (const field of Object.keys(metadata)) spelledBy.set(field, spellings[i]?.filter(([pointer]) => fieldOf(pointer) === field) ?? []);
  });
  const citations = seen.map((m) => m.citationMetadata).filter((c) => c !== undefined);
  if (new Set(citations.map((c) => canonicalJson(c))).size <= 1) return withSpellings(out, [...spelledBy.values()].flat());
  spelledBy.delete("citationMetadata");
  const sources: unknown[] = [];
  for (const c of citations) {
    if (typeof c !== "object" || c === null || !onlyFields(c, CITATION_FIELDS)) return null;
    const list = (c as { citationSources?: unknown }).citationSources;
    if (!Array.isArray(list)) return null;
    for (const source of list) if (!sources.some((s) => canonicalJson(s) === canonicalJson(source))) sources.push(source);
  }
  out.citationMetadata = { citationSources: sources };
  return withSpellings(out, [...spelledBy.values()].flat());
}

const CITATION_FIELDS: ReadonlySet<string> = new Set(["citationSources"]);

/**
 * Whether a response (or one streamed chunk) holds only what a replay sends back: its fields, and candidate 0's
 * alone. Another candidate (an upstream that answers `candidateCount` > 1 anyway streams each on chunks of its
 * own) would be joined to the first: before 11-28 a hit served both candidates' text as one.
 */
function replayable(response: GeminiChunk): boolean {
  return (
    onlyFields(response, RESPONSE_FIELDS) &&
    (response.candidates ?? []).every((c) => onlyFields(c, CANDIDATE_FIELDS) && (c.index === undefined || c.index === 0))
  );
}

/**
 * The answer in one JSON response (its text, when given, says how its metadata's numbers were written); null
 * when it is not one complete candidate a replay can serve whole.
 */
export function assembledOf(response: GeminiChunk, text?: string): GeminiAssembled | null {
  const candidates = response.candidates ?? [];
  if (candidates.length !== 1 || response.promptFeedback?.blockReason || !candidates[0].finishReason || !replayable(response)) return null;
  const content = candidates[0].content;
  return {
    content: { role: content?.role ?? "model", parts: content?.parts ?? [] },
    finishReason: candidates[0].finishReason,
    usage: response.usageMetadata,
    metadata: text === undefined ? metadataOf(candidates[0]) : withSpellings(metadataOf(candidates[0]), metadataSpellings(text, metadataOf(candidates[0]))),
  };
}

/**
 * Assembles `streamGenerateContent?alt=sse` from raw bytes cut anywhere: the
 * parts of every chunk in order, consecutive plain text parts joined into
 * one (as the JSON answer carries them; a part with a thought signature is
 * never joined with another, as Gemini's docs require), and how the chunks
 * were cut (src/providers/gemini/layout.ts). Null unless a chunk carried a
 * finish reason and none carried an error, a block, another candidate, a
 * field a replay would drop.
 */
export class GeminiStreamReader extends JsonEventStream<GeminiChunk> {
  private readonly parts: Part[] = [];
  private role = "model";
  private finishReason: string | null = null;
  private usage: GeminiChunk["usageMetadata"] = null;
  private readonly layout: ChunkLayout[] = [];
  private readonly seen: Array<Record<string, unknown>> = [];
  /** The spellings of each of `seen` (pointers from the candidate). */
  private readonly spellings: Spelling[][] = [];
  private lastMetadata = "{}[]";
  private readonly argsTexts: Array<string | undefined> = [];

  /** An `event: error` (a gateway naming its error event) fails the stream whatever its data. */
  protected override isFailureEvent(name: string | undefined): boolean {
    return name === "error";
  }

  protected onEvent(chunk: GeminiChunk, data: string): void {
    if (chunk.error || chunk.promptFeedback?.blockReason || (chunk.candidates?.length ?? 0) > 1 || !replayable(chunk)) {
      this.failed = true;
      return;
    }
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    const candidate = chunk.candidates?.[0];
    if (!candidate) {
      this.layout.push({ p: null, c: 0 });
      return;
    }
    const parts = candidate.content ? (candidate.content.parts ?? []) : null;
    if (candidate.content?.role) this.role = candidate.content.role;
    const entry: ChunkLayout = { p: parts && parts.map((p) => this.add(p)) };
    if (parts) this.argsTexts.push(...callArgsTexts(data, parts));
    if (candidate.finishReason) {
      this.finishReason = candidate.finishReason;
      entry.f = candidate.finishReason;
    }
    const metadata = metadataOf(candidate);
    const spelled = Object.keys(metadata).length > 0 ? metadataSpellings(data, metadata) : [];
    // The same values written otherwise (`0.10` after `0.1`) are another chunk metadata: its own spellings.
    const json = `${canonicalJson(metadata)}${JSON.stringify(spelled)}`;
    if (json !== this.lastMetadata) {
      entry.m = metadata;
      if (spelled.length > 0) entry.n = spelled;
    }
    this.lastMetadata = json;
    if (Object.keys(metadata).length > 0) {
      this.seen.push(metadata);
      this.spellings.push(spelled);
    }
    this.layout.push(entry);
  }

  /** Adds one streamed part; its piece in the layout (its text length when joined as plain text, else WHOLE). */
  private add(p: Part): number {
    const previous = this.parts[this.parts.length - 1];
    if (!isPlainText(p)) {
      this.parts.push({ ...p });
      return WHOLE;
    }
    // An empty text piece is the layout's 0 alone: a part of its own would be stored and served twice.
    if (p.text === "") return 0;
    if (isPlainText(previous)) this.parts[this.parts.length - 1] = { text: `${previous.text}${p.text}` };
    else this.parts.push({ text: p.text });
    return p.text.length;
  }

  result(): GeminiAssembled | null {
    this.end();
    if (this.failed || !this.finishReason) return null;
    const metadata = joinedMetadata(this.seen, this.spellings);
    if (!metadata) return null;
    const chunks = this.cutAsAHitCuts() ? undefined : this.layout;
    const { role, parts, finishReason, usage, argsTexts } = this;
    return { content: { role, parts }, finishReason, usage, metadata, chunks, argsTexts };
  }

  /** Whether the stream was cut as a hit cuts a recording without a layout: one whole part a chunk, the finish on the last, no metadata. */
  private cutAsAHitCuts(): boolean {
    const last = this.layout.length - 1;
    return (
      this.seen.length === 0 &&
      this.layout.length === this.parts.length &&
      this.layout.every((c, i) => c.p?.length === 1 && c.p[0] !== 0 && c.c === undefined && (c.f === undefined) === i < last)
    );
  }
}
