import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { gemini, importLayout, sseChunks } from "./gemini.support";
import { uniqueModel } from "./helpers";

/**
 * A streamed Gemini recording keeps how its chunks were cut (muscle-mem:chunks in its candidate
 * metadata, src/providers/gemini/layout.ts), each chunk with its finish reason. An import stores any layout
 * that covers the parts; a streamed hit must still end with the answer's finish reason, the one a JSON
 * hit and the dashboard show, and carry no other.
 */

type Chunk = { candidates?: Array<{ finishReason?: string }> };

async function streamedFinishes(model: string, ask: unknown, key: string): Promise<Array<string | undefined>> {
  const res = await gemini(model, ask, { key, stream: true });
  expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  const chunks = sseChunks<Chunk>(await res.text());
  return chunks.map((c) => c.candidates?.[0]?.finishReason);
}

describe("Gemini: an imported chunk layout and the answer's finish reason", () => {
  const layouts: Array<[string, unknown[]]> = [
    ["names another finish reason", [{ p: [2] }, { p: [4], f: "SAFETY" }]],
    ["names none", [{ p: [2] }, { p: [4] }]],
    [
      "finishes early",
      [
        { p: [2], f: "STOP" },
        { p: [4], f: "MAX_TOKENS" },
      ],
    ],
  ];
  for (const [what, layout] of layouts) {
    it(`Should end a streamed hit with the answer's finish reason, once, when the imported layout ${what}`, async () => {
      const key = newKey();
      const model = uniqueModel("layout-finish");
      const { imported, ask } = await importLayout(key, model, layout);
      expect(imported.status).toBe(200);
      const json = await gemini(model, ask, { key });
      expect(((await json.json()) as Chunk).candidates?.[0]?.finishReason).toBe("STOP");
      const finishes = await streamedFinishes(model, ask, key);
      expect(finishes.filter((f) => f !== undefined)).toEqual(["STOP"]);
      expect(finishes[finishes.length - 1]).toBe("STOP");
    });
  }
});
