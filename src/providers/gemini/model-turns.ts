import type { CanonicalPart, GeminiNode } from "./schema";

/** A plain text part: its text alone (a thought summary, a signature or any other field keeps it apart). */
const isPlainText = (p: CanonicalPart): p is { text: string } => typeof p.text === "string" && Object.keys(p).length === 1;

/** `parts` with each run of adjacent plain text parts joined into one. */
export function joinedText(parts: readonly CanonicalPart[]): CanonicalPart[] {
  const out: CanonicalPart[] = [];
  for (const part of parts) {
    const last = out[out.length - 1];
    if (last !== undefined && isPlainText(last) && isPlainText(part)) out[out.length - 1] = { text: last.text + part.text };
    else out.push(part);
  }
  return out;
}

/**
 * The model's turns as the tree keys them: consecutive `model` contents as one, adjacent plain text parts
 * joined. google-genai's chats (Python and JS) keep one model content per streamed chunk, and a JSON
 * answer's content whole: one answer, written two ways, which the model reads as the same turn. Keyed as
 * sent, a chat recorded one way missed when run the other (test/worker/pyclient-hunt.gemini.test.ts). A
 * recorded answer is joined the same way (src/providers/gemini/key.ts). User turns are keyed as sent.
 */
export function joinedModelTurns(hashed: readonly GeminiNode[], stored: readonly GeminiNode[]): { hashed: GeminiNode[]; stored: GeminiNode[] } {
  const outHashed: GeminiNode[] = [];
  const outStored: GeminiNode[] = [];
  for (let i = 0; i < hashed.length; i++) {
    const last = outHashed.length - 1;
    const merge = hashed[i].role === "model" && last >= 0 && outHashed[last].role === "model";
    const parts = (nodes: GeminiNode[], node: GeminiNode) => joinedText(merge ? [...nodes[last].parts, ...node.parts] : node.parts);
    if (hashed[i].role !== "model") {
      outHashed.push(hashed[i]);
      outStored.push(stored[i]);
    } else if (merge) {
      outHashed[last] = { role: "model", parts: parts(outHashed, hashed[i]) };
      outStored[last] = { role: "model", parts: parts(outStored, stored[i]) };
    } else {
      outHashed.push({ role: "model", parts: parts(outHashed, hashed[i]) });
      outStored.push({ role: "model", parts: parts(outStored, stored[i]) });
    }
  }
  return { hashed: outHashed, stored: outStored };
}
