import { z } from "zod";

/**
 * How a recorded stream was cut into chunks, so that a streamed hit sends the chunks the model sent.
 * `@google/genai`'s chat keeps one model content per streamed chunk in its history, so a hit cut
 * otherwise would send the agent's next request down another path (and a signature is never moved
 * to another part). Stored in the answer's candidate metadata under LAYOUT_KEY, outside its hash.
 *
 * A chunk's `p` lists its parts as pieces of the recorded parts, in order: a number is that many
 * UTF-16 units of the current plain text part (consecutive text chunks were joined into one part; 0
 * is an empty text piece, which consumes nothing), -1 is the whole current part. `p: null`: the
 * chunk's candidate had no content; `c: 0`: the chunk had no candidate. `f`: the chunk's finish
 * reason. `m`: the candidate metadata the chunk carried (safetyRatings, citationMetadata,
 * finishMessage), when it differs from the previous chunk's (absent: the same; none before the first);
 * `n`: with `m`, its numbers written otherwise than JSON.stringify would (`[pointer from the candidate, text]`).
 */
export const LAYOUT_KEY = "muscle-mem:chunks";

export const WHOLE = -1;

const chunkLayout = z.object({
  p: z.array(z.number().int().min(WHOLE)).nullable(),
  c: z.literal(0).optional(),
  f: z.string().optional(),
  // Only the recorded candidate metadata (RECORDED_METADATA): an imported layout never puts another field on a candidate.
  m: z.strictObject({ safetyRatings: z.unknown().optional(), citationMetadata: z.unknown().optional(), finishMessage: z.unknown().optional() }).optional(),
  n: z.array(z.tuple([z.string(), z.string()])).optional(),
});

export type ChunkLayout = z.infer<typeof chunkLayout>;

const layoutSchema = z.array(chunkLayout).min(1);

type Served = Record<string, unknown>;

/** One chunk to serve: its parts (null: no content), whether it has a candidate, its finish reason and metadata. */
export interface PlannedChunk {
  parts: Served[] | null;
  candidate: boolean;
  finishReason?: string;
  metadata: Record<string, unknown>;
  /** How the metadata's numbers were written where JSON.stringify would write them otherwise (pointers from the candidate); none: undefined. */
  numbers?: Array<[string, string]>;
}

/** Whether a part is plain text (its text alone): the parts a recording joins and a layout cuts by length. */
export const isPlainText = (p: Served | undefined): p is { text: string } => p !== undefined && typeof p.text === "string" && Object.keys(p).length === 1;

/**
 * Whether the layout's finish reasons are the answer's: the last chunk with a candidate names `finishReason`,
 * the one a JSON hit serves, as every Gemini stream ends (a usage-only chunk may follow), and each other chunk
 * that names one names it too (Gemini 1.5 sent it on every chunk).
 */
function finishesAs(layout: readonly ChunkLayout[], finishReason: string): boolean {
  const last = layout.filter((c) => c.c !== 0).pop();
  return last?.f === finishReason && layout.every((c) => c.f === undefined || c.f === finishReason);
}

/**
 * The chunks to serve for `parts` (the recorded parts as served) cut as `layout` says; null when the
 * layout is missing, malformed, does not cover the parts exactly or finishes otherwise than the answer
 * (an imported or older answer: the caller cuts one chunk per part).
 */
export function plannedChunks(layout: unknown, parts: readonly Served[], finishReason: string): PlannedChunk[] | null {
  const parsed = layoutSchema.safeParse(layout);
  if (!parsed.success || !finishesAs(parsed.data, finishReason)) return null;
  let index = 0;
  let offset = 0;
  let metadata: Record<string, unknown> = {};
  let numbers: Array<[string, string]> | undefined;
  const out: PlannedChunk[] = [];
  for (const chunk of parsed.data) {
    if (chunk.m !== undefined) {
      metadata = chunk.m;
      numbers = chunk.n;
    }
    let served: Served[] | null = null;
    if (chunk.p !== null) {
      served = [];
      for (const piece of chunk.p) {
        const part = parts[index];
        if (piece === 0) {
          served.push({ text: "" });
          continue;
        }
        if (part === undefined) return null;
        if (piece === WHOLE) {
          if (offset !== 0) return null;
          served.push(part);
          index++;
          continue;
        }
        if (!isPlainText(part) || offset + piece > part.text.length) return null;
        served.push({ text: part.text.slice(offset, offset + piece) });
        offset += piece;
        if (offset === part.text.length) {
          index++;
          offset = 0;
        }
      }
    }
    if (chunk.c === 0 && (served !== null || chunk.f !== undefined)) return null;
    out.push({ parts: served, candidate: chunk.c !== 0, finishReason: chunk.f, metadata, numbers });
  }
  return index === parts.length && offset === 0 ? out : null;
}
