import { describe, expect, it } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { geminiErrorBody } from "../../src/providers/gemini/errors";
import { keyGeminiAnswer, keyGeminiRequest, type GeminiKey } from "../../src/providers/gemini/key";
import { geminiAnswerOf, renderGenerateContent, renderGenerateContentStream } from "../../src/providers/gemini/render";
import type { GenerateContentRequest } from "../../src/providers/gemini/schema";
import { GeminiStreamReader } from "../../src/providers/gemini/stream";

const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };
const user = (text: string) => ({ role: "user", parts: [{ text }] });

function keyed(body: Partial<GenerateContentRequest>, model = "gemini-x") {
  return keyGeminiRequest({ contents: [user("hi")], ...body } as GenerateContentRequest, model, scope);
}
function keyOf(body: Partial<GenerateContentRequest>, model = "gemini-x"): GeminiKey {
  const out = keyed(body, model);
  if (!out.ok) throw new Error(JSON.stringify(out));
  return out.key;
}

describe("Gemini keying", () => {
  it("Should key a content without a role as a user turn, and ignore function-call ids (ordinals) and args key order", () => {
    expect(keyOf({ contents: [{ parts: [{ text: "hi" }] }] }).key).toBe(keyOf({}).key);
    const turn = (id: string, args: Record<string, unknown>) => [
      user("go"),
      { role: "model", parts: [{ functionCall: { id, name: "f", args } }] },
      { role: "user", parts: [{ functionResponse: { id, name: "f", response: { ok: true } } }] },
    ];
    expect(keyOf({ contents: turn("a1", { x: 1, y: 2 }) }).key).toBe(keyOf({ contents: turn("b2", { y: 2, x: 1 }) }).key);
  });

  it("Should put the model, systemInstruction, tools, toolConfig, generationConfig and unknown fields in the frame", () => {
    const key = keyOf({}).key;
    expect(keyOf({}, "gemini-y").key).not.toBe(key);
    for (const change of [
      { systemInstruction: { parts: [{ text: "s" }] } },
      { tools: [{ functionDeclarations: [] }] },
      { toolConfig: { functionCallingConfig: { mode: "ANY" } } },
      { generationConfig: { temperature: 0 } },
      { futureKnob: 1 },
    ]) {
      expect(keyOf(change as Partial<GenerateContentRequest>).key).not.toBe(key);
    }
    expect(keyOf({}).frameJson).toContain('"muscle-mem:api":"gemini"');
  });

  it("Should bypass server-side tools, cachedContent, several candidates and media, and key thoughts", () => {
    expect(keyed({ tools: [{ googleSearch: {} }] })).toEqual({ ok: false, bypass: "server-side tool googleSearch" });
    expect(keyed({ tools: [{ codeExecution: {} }] })).toEqual({ ok: false, bypass: "server-side tool codeExecution" });
    expect(keyed({ cachedContent: "cachedContents/1" })).toEqual({ ok: false, bypass: "cachedContent" });
    expect(keyed({ generationConfig: { candidateCount: 2 } })).toEqual({ ok: false, bypass: "candidateCount > 1" });
    expect(keyed({ contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "AA" } }] }] })).toEqual({
      ok: false,
      bypass: "inlineData part",
    });
    // A thought summary sent back is a text part keyed with its flag (test/unit/gemini-thoughts.test.ts).
    expect(keyed({ contents: [{ role: "model", parts: [{ text: "hmm", thought: true }] }] })).toMatchObject({ ok: true });
  });

  it("Should pass a function result sent as role function (earlier clients) to the model, not refuse it", () => {
    const call = { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] };
    expect(keyed({ contents: [user("x"), call, { role: "function", parts: [{ functionResponse: { name: "f", response: { ok: true } } }] }] })).toEqual({
      ok: false,
      bypass: "role function",
    });
  });

  it("Should reject an unknown role as bad input", () => {
    expect(keyed({ contents: [{ role: "tool", parts: [{ text: "x" }] }] })).toMatchObject({ ok: false, invalid: { param: "contents[0].role" } });
  });
});

describe("Gemini answers", () => {
  const key = keyOf({});
  const content = { role: "model", parts: [{ text: "Looking." }, { functionCall: { name: "get_order", args: { z: 1, a: "A-1" } }, thoughtSignature: "sig" }] };
  const stored = (): StoredAnswer => {
    const answer = keyGeminiAnswer(key, content);
    if (!answer) throw new Error("no answer");
    return { hash: answer.hash, message: JSON.parse(answer.json), observations: 1, finishReason: "STOP", promptTokens: 4, completionTokens: 2, latencyMs: 1 };
  };

  it("Should key the answer as the node the echoed content walks to", () => {
    expect(stored().hash).toBe(keyOf({ contents: [user("hi"), content] }).path[1].hash);
  });

  it("Should serve the recorded parts with the args in the order the model wrote them, and its thought signature", () => {
    const answer = geminiAnswerOf(stored());
    if (!answer) throw new Error("not renderable");
    const json = JSON.stringify(renderGenerateContent(answer, { model: "gemini-x", responseId: "r" }));
    expect(json).toContain('"thoughtSignature":"sig","functionCall":{"name":"get_order","args":{"z":1,"a":"A-1"}}');
  });

  it("Should assemble a stream into the same answer as the JSON body, and read its own rendering back", () => {
    const reader = new GeminiStreamReader();
    const chunk = (parts: unknown[], extra = {}) =>
      `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts }, index: 0, ...extra }] })}\r\n\r\n`;
    reader.feed(new TextEncoder().encode(chunk([{ text: "Look" }]) + chunk([{ text: "ing." }]) + chunk(content.parts.slice(1), { finishReason: "STOP" })));
    const result = reader.result();
    expect(result?.finishReason).toBe("STOP");
    expect(keyGeminiAnswer(key, result!.content)?.hash).toBe(stored().hash);
    const answer = geminiAnswerOf(stored())!;
    const again = new GeminiStreamReader();
    again.feed(new TextEncoder().encode(renderGenerateContentStream(answer, { model: "gemini-x", responseId: "r" })));
    expect(keyGeminiAnswer(key, again.result()!.content)?.hash).toBe(stored().hash);
  });

  it("Should not read a stream without a finish reason, or a blocked one, as an answer", () => {
    const cut = new GeminiStreamReader();
    cut.feed(new TextEncoder().encode(`data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "x" }] } }] })}\r\n\r\n`));
    expect(cut.result()).toBeNull();
    const blocked = new GeminiStreamReader();
    blocked.feed(
      new TextEncoder().encode(`data: ${JSON.stringify({ promptFeedback: { blockReason: "SAFETY" }, candidates: [{ finishReason: "STOP" }] })}\r\n\r\n`),
    );
    expect(blocked.result()).toBeNull();
  });

  it("Should not record a function response or an empty content as the model's answer", () => {
    expect(keyGeminiAnswer(key, { role: "model", parts: [] })).toBeNull();
    expect(keyGeminiAnswer(key, { role: "user", parts: [{ text: "x" }] })).toBeNull();
  });

  it("Should shape errors as Gemini does", () => {
    expect(geminiErrorBody(400, "bad")).toEqual({ error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" } });
    expect(geminiErrorBody(504, "late").error.status).toBe("DEADLINE_EXCEEDED");
  });
});
