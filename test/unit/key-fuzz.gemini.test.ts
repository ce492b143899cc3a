import { describe, expect, it } from "vitest";
import { keyGeminiRequest } from "../../src/providers/gemini/key";
import { generateContentRequest } from "../../src/providers/gemini/schema";
import { setAt, type Allowed, type Json, type Outcome } from "./key-fuzz.support";
import { fuzzSuite, pathOf } from "./key-fuzz.suite";

/**
 * The key fuzzer on Gemini generateContent (key-fuzz.support.ts): the model (the URL's), the query string, every
 * documented field of the body, of each content and part (text, thoughts, function calls and responses),
 * tool declaration, tool config and generation config, changed alone, changes the key or bypasses, unless
 * allowed below with docs/reliability.md's reason.
 */

const base: Json = {
  model: "gemini-2.5-flash",
  query: { foo: "bar" },
  headers: { "x-goog-api-client": "genai-js/1.0", "x-goog-user-project": "proj-1" },
  body: {
    systemInstruction: { parts: [{ text: "You are terse." }, { text: "Use tools." }] },
    tools: [
      {
        functionDeclarations: [
          {
            name: "get_weather",
            description: "Weather for a city",
            parameters: { type: "OBJECT", properties: { city: { type: "STRING" }, unit: { type: "STRING", enum: ["c", "f"] } }, required: ["city"] },
          },
          { name: "search", description: "Web search", parametersJsonSchema: { type: "object", properties: { q: { type: "string" } } } },
        ],
      },
    ],
    toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather", "search"] } },
    safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_ONLY_HIGH" }],
    labels: { team: "a" },
    generationConfig: {
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 500,
      candidateCount: 1,
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      stopSequences: ["END", "STOP"],
      responseMimeType: "application/json",
      responseJsonSchema: { type: "object", properties: { a: { type: "string" } } },
      thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 },
      mediaResolution: "MEDIA_RESOLUTION_LOW",
    },
    contents: [
      { role: "user", parts: [{ text: "Weather in Paris and Rome?" }, { text: "Celsius." }] },
      {
        role: "model",
        parts: [
          { text: "Two cities.", thought: true, thoughtSignature: "sig-0" },
          { text: "Checking." },
          { functionCall: { id: "fc_a", name: "get_weather", args: { city: "Paris", unit: "c" } }, thoughtSignature: "sig-1" },
          { functionCall: { id: "fc_b", name: "get_weather", args: { city: "Rome" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "fc_a", name: "get_weather", response: { temp: 18 } } },
          { functionResponse: { id: "fc_b", name: "get_weather", response: { temp: 21 } } },
        ],
      },
      { role: "model", parts: [{ text: "Paris 18C, Rome 21C." }] },
      { role: "user", parts: [{ text: "And tomorrow?" }] },
    ],
  },
};

/** Documented fields absent from the base, added one at a time. */
const ADDED: Array<[string, Json]> = [
  // Another value the API allows for an enum-like field (a role, a tool choice, an effort): the generic mutations' values are 400s.
  ["/body/contents/4/role", "model"],
  ["/body/toolConfig/functionCallingConfig/mode", "AUTO"],
  ["/body/toolConfig/functionCallingConfig/mode", "NONE"],
  ["/body/toolConfig/functionCallingConfig/mode", "VALIDATED"],
  ["/body/safetySettings/0/threshold", "BLOCK_NONE"],
  ["/body/generationConfig/mediaResolution", "MEDIA_RESOLUTION_HIGH"],
  ["/body/generationConfig/responseSchema", { type: "OBJECT", properties: { b: { type: "STRING" } } }],
  ["/body/generationConfig/enableEnhancedCivicAnswers", true],
  ["/body/generationConfig/thinkingConfig/thinkingLevel", "LOW"],
  ["/body/generationConfig/responseLogprobs", true],
  ["/body/generationConfig/logprobs", 2],
  ["/body/generationConfig/responseModalities", ["TEXT"]],
  ["/body/tools/0/functionDeclarations/0/response", { type: "OBJECT" }],
  ["/body/tools/0/functionDeclarations/0/behavior", "NON_BLOCKING"],
  ["/body/generationConfig/enableAffectiveDialog", true],
  ["/body/generationConfig/audioTimestamp", true],
  ["/body/generationConfig/imageConfig", { aspectRatio: "16:9" }],
  ["/body/generationConfig/routingConfig", { autoMode: { modelRoutingPreference: "PRIORITIZE_QUALITY" } }],
  ["/body/generationConfig/responseMimeType", "text/x.enum"],
  ["/body/cachedContent", "cachedContents/1"],
  ["/body/contents/0/parts/2", { inlineData: { mimeType: "image/png", data: "AAAA" } }],
  ["/body/contents/0/parts/2", { fileData: { mimeType: "application/pdf", fileUri: "gs://b/f.pdf" } }],
  ["/body/contents/0/parts/2", { inline_data: { mime_type: "image/png", data: "AAAA" } }],
  ["/body/tools/1", { googleSearch: {} }],
  ["/body/tools/1", { codeExecution: {} }],
  ["/body/generationConfig/speechConfig", { voiceConfig: { prebuiltVoiceConfig: { voiceName: "Kore" } } }],
  ["/body/generationConfig/responseModalities", ["TEXT", "IMAGE"]],
  ["/body/generation_config", { candidate_count: 2 }],
  ["/body/cached_content", "cachedContents/1"],
  ["/query/alt", "proto"],
  ["/model", "gemini-2.5-pro"],
  ["/body/contents/2/parts/0/functionResponse/willContinue", true],
  ["/body/contents/2/parts/0/functionResponse/scheduling", "SILENT"],
  ["/headers/x-goog-request-reason", "audit"],
];

const DOCUMENTED = [
  ...["systemInstruction", "tools", "toolConfig", "safetySettings", "labels", "generationConfig", "contents", "cachedContent"],
  ...["tools/*/functionDeclarations/*/name", "tools/*/functionDeclarations/*/description", "tools/*/functionDeclarations/*/parameters"],
  ...["tools/*/functionDeclarations/*/parametersJsonSchema", "tools/*/functionDeclarations/*/response", "toolConfig/functionCallingConfig/mode"],
  ...["toolConfig/functionCallingConfig/allowedFunctionNames", "safetySettings/*/category", "safetySettings/*/threshold"],
  ...["temperature", "topP", "topK", "maxOutputTokens", "candidateCount", "seed", "presencePenalty", "frequencyPenalty", "stopSequences"]
    .concat(["responseMimeType", "responseJsonSchema", "responseSchema", "thinkingConfig/includeThoughts", "thinkingConfig/thinkingBudget"])
    .concat(["thinkingConfig/thinkingLevel", "mediaResolution", "responseLogprobs", "logprobs", "responseModalities", "enableEnhancedCivicAnswers"])
    .map((f) => `generationConfig/${f}`),
  ...["contents/*/role", "contents/*/parts/*/text", "contents/*/parts/*/thought", "contents/*/parts/*/thoughtSignature"],
  ...["contents/*/parts/*/functionCall/id", "contents/*/parts/*/functionCall/name", "contents/*/parts/*/functionCall/args"],
  ...["contents/*/parts/*/functionResponse/id", "contents/*/parts/*/functionResponse/name", "contents/*/parts/*/functionResponse/response"],
].map((f) => `/body/${f}`);

/** Changes that may keep the key, each with docs/reliability.md's reason (the Gemini row). */
const ALLOWED: Allowed = {
  "/headers/**": "`x-goog-api-client` (telemetry), `x-goog-user-project` (billing) and other headers are not keyed",
  "/headers field added": "headers are not keyed",
  "/body/** respelled": "a number's spelling: Gemini reads every JSON number as a double (protobuf), so `1.0` is `1` to it",
  "/body/contents/*/role removed": "a content without a role is a user turn (Gemini's default)",
};

function keyOf(request: Json): Outcome {
  const { model, query, body, headers } = request as { model: unknown; query: Record<string, unknown>; body: unknown; headers: Record<string, unknown> };
  if (typeof model !== "string" || model === "") return { invalid: "no model" };
  const parsed = generateContentRequest.safeParse(body);
  if (!parsed.success) return { invalid: parsed.error.message };
  const url = new URL(`https://mm.test/v1beta/models/${model}:generateContent`);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.append(k, typeof v === "string" ? v : JSON.stringify(v));
  const h = new Headers(Object.entries(headers ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  const out = keyGeminiRequest(parsed.data, model, { tenant: "t", namespace: "default", maxMessageBytes: 256 * 1024 }, url, h);
  return out.ok ? { key: out.key.key } : "bypass" in out ? { bypass: out.bypass } : { invalid: out.invalid.message };
}

describe("key fuzzer: Gemini generateContent", () => {
  fuzzSuite({ base, keyOf, allowed: ALLOWED, added: ADDED, documented: DOCUMENTED, atLeast: 250 });

  it("Should keep the key for the spellings the docs call one (a user turn without its role, a call id renamed everywhere)", () => {
    const key = keyOf(base);
    expect(keyOf(setAt(base, ["body", "contents", 4, "role"], undefined))).toEqual(key);
    const renamed = setAt(
      setAt(base, ["body", "contents", 1, "parts", 2, "functionCall", "id"], "fc_zz"),
      ["body", "contents", 2, "parts", 0, "functionResponse", "id"],
      "fc_zz",
    );
    expect(keyOf(renamed)).toEqual(key);
    expect(keyOf(setAt(base, ["body", "contents", 1, "parts", 2, "functionCall", "args"], { unit: "c", city: "Paris" }))).toEqual(key);
  });

  it("Should keep the key for the headers (the allow-list is honest) and change it for the query string", () => {
    const key = keyOf(base);
    expect(keyOf(setAt(base, pathOf("/headers/x-goog-api-client"), "other/2"))).toEqual(key);
    expect(keyOf(setAt(base, pathOf("/headers/x-goog-user-project"), undefined))).toEqual(key);
    expect(keyOf(setAt(base, pathOf("/query/key"), "AIza-other"))).toEqual(key);
    expect(keyOf(setAt(base, pathOf("/query/foo"), "baz"))).not.toEqual(key);
  });
});
