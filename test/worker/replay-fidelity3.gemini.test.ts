import { describe, expect, it } from "vitest";
import { geminiMissAndHits } from "./gemini-replay.support";
import { sseChunks } from "./gemini.support";

/**
 * Answer fidelity 3, Gemini: a hit writes the candidate metadata it serves as recorded (`safetyRatings`
 * probabilities and scores, `citationMetadata`) with the numbers as the upstream wrote them (`0.10`,
 * `9.765625e-04`, as a proxy or a printer other than JavaScript's writes them), JSON and streamed. Before, they
 * came back in JavaScript's spelling (`0.1`), which a client that keeps the text reads as another value.
 */

const body = { contents: [{ role: "user", parts: [{ text: "Is the service up?" }] }] };
const usage = '"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":4,"totalTokenCount":9}';
const ratings = (score: string) =>
  `"safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"NEGLIGIBLE","probabilityScore":${score},"severity":"HARM_SEVERITY_NEGLIGIBLE","severityScore":9.765625e-04}]`;
const citations = '"citationMetadata":{"citationSources":[{"startIndex":0,"endIndex":12.0,"uri":"https://example.com"}]}';

/** A candidate's text with `parts` (text) and `fields` (text, each ending in a comma). */
const candidate = (parts: string, fields: string) => `{"content":{"role":"model","parts":${parts}},${fields}"index":0}`;

/** The text of each response's (chunk's) candidate 0 in a body, JSON or streamed. */
function candidateTexts(text: string, stream: boolean): string[] {
  const lines = stream
    ? text
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
    : [text];
  return lines.map((l) => /"candidates":\[(.*)\](?=,"(?:usageMetadata|modelVersion))/.exec(l)?.[1] ?? "");
}

const SPELLED = ['"probabilityScore":0.10', '"severityScore":9.765625e-04', '"endIndex":12.0'];

describe("replay fidelity 3: Gemini candidate metadata numbers as the upstream wrote them", () => {
  it("Should write a JSON recording's metadata numbers as sent, JSON and streamed hits (was: `0.10` as `0.1`)", async () => {
    const text = `{"candidates":[${candidate('[{"text":"Yes, it is up."}]', `"finishReason":"STOP",${ratings("0.10")},${citations},`)}],${usage},"modelVersion":"stub"}`;
    const out = await geminiMissAndHits(body, { text }, false);
    expect(out.json).not.toBeNull();
    for (const s of SPELLED) expect(out.json).toContain(s);
    expect(out.stream).not.toBeNull();
    for (const s of SPELLED) expect(out.stream).toContain(s);
    expect(
      sseChunks<{ candidates: Array<{ safetyRatings: Array<{ probabilityScore: number }> }> }>(out.stream ?? "")[0].candidates[0].safetyRatings[0]
        .probabilityScore,
    ).toBe(0.1);
  });

  it("Should write each streamed chunk's metadata numbers as that chunk sent them, and a JSON hit as the last (was: `0.10` as `0.1`)", async () => {
    const chunk = (parts: string, fields: string, tail = "") => `{"candidates":[${candidate(parts, fields)}]${tail},"modelVersion":"stub"}`;
    const sse = [
      chunk('[{"text":"Yes, "}]', `${ratings("0.1")},`),
      chunk('[{"text":"it is up."}]', `${ratings("0.10")},`),
      chunk('[{"text":""}]', `"finishReason":"STOP",${ratings("0.10")},${citations},`, `,${usage}`),
    ];
    const out = await geminiMissAndHits(body, { sse }, true);
    expect(out.stream).not.toBeNull();
    const served = candidateTexts(out.stream ?? "", true);
    const sent = candidateTexts(out.miss, true);
    expect(served.map((c) => /"probabilityScore":[^,]*/.exec(c)?.[0])).toStrictEqual(sent.map((c) => /"probabilityScore":[^,]*/.exec(c)?.[0]));
    expect(served.at(-1)).toContain('"endIndex":12.0');
    expect(out.json).not.toBeNull();
    for (const s of SPELLED) expect(out.json).toContain(s);
  });

  it("Should write numbers JavaScript's way where the upstream did", async () => {
    const text = `{"candidates":[${candidate('[{"text":"Yes."}]', `"finishReason":"STOP",${ratings("0.5").replace("9.765625e-04", "0.25")},`)}],${usage},"modelVersion":"stub"}`;
    const out = await geminiMissAndHits(body, { text }, false);
    expect(out.json).toContain('"probabilityScore":0.5,');
    expect(out.json).toContain('"severityScore":0.25}');
  });
});
