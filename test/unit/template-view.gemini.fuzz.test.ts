import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import { apiMessageOf, chatViewOf } from "../../src/cache/templates/view";
import { keyGeminiAnswer, keyGeminiRequest } from "../../src/providers/gemini/key";
import { content, generateContentRequest, type GenerateContentRequest } from "../../src/providers/gemini/schema";
import { geminiTemplateView as view } from "../../src/providers/gemini/template-view";
import { mutationsOf, type Json } from "./key-fuzz.support";

/**
 * The Gemini view under the key fuzzer's mutations (key-fuzz.support.ts: every value of the contents changed to
 * another of its type or another type, removed, nulled, arrays emptied, reversed, swapped, fields added): every
 * content the adapter stores has a view that gives it back, and a stored content that differs from the base's
 * (in anything: the hash or only its stored form, such as an empty text part or argument text) has another view.
 */
const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };

const CONTENTS: Json = [
  { role: "user", parts: [{ text: "Weather in Paris and Rome?" }, { text: "" }, { text: "Celsius." }] },
  {
    role: "model",
    parts: [
      { text: "Two cities.", thought: true, thoughtSignature: "sig-0" },
      { text: "Checking." },
      { functionCall: { id: "fc_a", name: "get_weather", args: { city: "Paris", unit: "c" } }, thoughtSignature: "sig-1" },
      { functionCall: { id: "fc_b", name: "get_weather", args: { city: "Rome", days: 2 } } },
      { functionCall: { name: "now" } },
    ],
  },
  {
    role: "user",
    parts: [
      { functionResponse: { id: "fc_a", name: "get_weather", response: { temp: 18, sky: "clear" } } },
      { functionResponse: { id: "fc_b", name: "get_weather", response: { temp: 21 }, willContinue: false } },
      { functionResponse: { name: "now", response: { iso: "2026-11-28T10:00:00Z" } } },
    ],
  },
  { role: "model", parts: [{ text: "Paris 18C, " }, { text: "Rome 21C." }] },
  { role: "user", parts: [{ text: "And tomorrow?", partMetadata: { k: 1 } }] },
];

/** The stored path contents of a request, or null when the adapter does not key it (or its schema refuses it). */
function storedPath(contents: Json): unknown[] | null {
  const body = generateContentRequest.safeParse({ contents });
  const out = body.success ? keyGeminiRequest(body.data, "gemini-x", scope) : null;
  return out?.ok ? out.key.path.map((s) => JSON.parse(s.json) as unknown) : null;
}

/** Checks the round trip of every stored content and that each one stored otherwise than `base`'s at its place has another view. */
function check(stored: unknown[], base: unknown[]): number {
  let apart = 0;
  stored.forEach((m, i) => {
    const chat = chatViewOf(view, m);
    expect(chat, JSON.stringify(m)).not.toBeNull();
    expect(apiMessageOf(view, chat as CanonicalMessage)).toEqual(m);
    if (i < base.length && canonicalJson(m) !== canonicalJson(base[i])) {
      expect(canonicalJson(chat)).not.toBe(canonicalJson(chatViewOf(view, base[i])));
      apart++;
    }
  });
  return apart;
}

describe("Gemini template view under the key fuzzer", () => {
  it("Should give every mutated request's stored contents back, and another view wherever a content is stored otherwise", () => {
    const base = storedPath(CONTENTS) as unknown[];
    let keyed = 0;
    let apart = 0;
    for (const seed of [1, 2, 3]) {
      for (const mutation of mutationsOf({ contents: CONTENTS }, seed)) {
        if ("raw" in (mutation.body as Record<string, Json>)) continue;
        const stored = storedPath((mutation.body as { contents: Json }).contents);
        if (!stored) continue;
        keyed++;
        apart += check(stored, base);
      }
    }
    // The mutations reach the views: most are keyed, and most of those change a stored content.
    expect(keyed).toBeGreaterThan(400);
    expect(apart).toBeGreaterThan(400);
  });

  it("Should give every mutated recorded answer back, its args texts as written, and another view wherever it is stored otherwise", () => {
    const request = keyGeminiRequest({ contents: [{ role: "user", parts: [{ text: "go" }] }] } as GenerateContentRequest, "gemini-x", scope);
    if (!request.ok) throw new Error("not keyed");
    const answer: Json = {
      role: "model",
      parts: [
        { text: "Sure." },
        { text: "" },
        { functionCall: { name: "refund", args: { order_id: "A-1", qty: 1 } }, thoughtSignature: "s" },
        { functionCall: { id: "x", name: "get", args: { n: 2 } } },
      ],
    };
    const recorded = (candidate: Json) => {
      const parsed = content.safeParse(candidate);
      const out = parsed.success ? keyGeminiAnswer(request.key, parsed.data, { safetyRatings: [] }, ['{"qty":1.0,"order_id":"A-1"}']) : null;
      return out ? [JSON.parse(out.json) as unknown] : null;
    };
    const base = recorded(answer) as unknown[];
    let keyed = 0;
    let apart = 0;
    for (const seed of [1, 2, 3]) {
      for (const mutation of mutationsOf({ answer }, seed)) {
        if ("raw" in (mutation.body as Record<string, Json>)) continue;
        const stored = recorded((mutation.body as { answer: Json }).answer);
        if (!stored) continue;
        keyed++;
        const { "muscle-mem:candidate": _metadata, ...message } = stored[0] as Record<string, unknown>;
        const { "muscle-mem:candidate": _base, ...baseMessage } = base[0] as Record<string, unknown>;
        apart += check([message], [baseMessage]);
      }
    }
    expect(keyed).toBeGreaterThan(100);
    expect(apart).toBeGreaterThan(100);
  });
});
