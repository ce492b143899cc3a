import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { gemini, importLayout, sseChunks } from "./gemini.support";
import { uniqueModel } from "./helpers";

/**
 * An imported chunk layout (muscle-mem:chunks, src/providers/gemini/layout.ts): a layout
 * whose finish reasons are all the answer's is replayed, but one that names it on an early chunk only ended
 * the streamed hit on a chunk without a finish reason, although the JSON hit, the stored answer and every
 * recorded Gemini stream finish on the last chunk with a candidate.
 */

type Chunk = { candidates?: Array<{ finishReason?: string; content?: { parts?: Array<{ text?: string }> } }>; usageMetadata?: unknown };

describe("Gemini: an imported layout that finishes before its last chunk", () => {
  const layouts: Array<[string, unknown[]]> = [
    ["on the first of two content chunks", [{ p: [2], f: "STOP" }, { p: [4] }]],
    ["before a chunk with an empty candidate", [{ p: [6], f: "STOP" }, { p: null }]],
  ];
  for (const [what, layout] of layouts) {
    it(`Should end a streamed hit on a chunk carrying the answer's finish reason when the layout names it ${what}`, async () => {
      const key = newKey();
      const model = uniqueModel("layout-early");
      const { imported, ask } = await importLayout(key, model, layout);
      expect(imported.status).toBe(200);
      const res = await gemini(model, ask, { key, stream: true });
      expect(res.headers.get("muscle-mem-cache")).toBe("hit");
      const chunks = sseChunks<Chunk>(await res.text());
      const withCandidate = chunks.filter((c) => c.candidates !== undefined);
      expect(withCandidate[withCandidate.length - 1].candidates?.[0]?.finishReason).toBe("STOP");
      expect(
        chunks
          .flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])
          .map((p) => p.text)
          .join(""),
      ).toBe("Hello.");
    });
  }
});
