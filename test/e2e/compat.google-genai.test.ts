import { GoogleGenAI, Type, type Content, type Part, type Tool } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { geminiRefundDesk, startScriptedGeminiModel, type ScriptedGeminiModel } from "../../tools/scripted-gemini-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { PROMPT, providerMatrixRow, type ProviderRunner } from "./provider.compat-support";
import { Desk, GET_ORDER_SCHEMA, REFUND_SCHEMA } from "./support-compat";

let model: ScriptedGeminiModel;
let dev: WranglerDev;
beforeAll(async () => {
  model = await startScriptedGeminiModel({ script: geminiRefundDesk });
  dev = await startWranglerDev({ vars: { GEMINI_BASE_URL: model.url } });
});
afterAll(async () => {
  await dev?.stop();
  await model?.close();
});

const tools: Tool[] = [
  {
    functionDeclarations: [
      {
        name: "get_order",
        description: "Look up an order by id.",
        parameters: { type: Type.OBJECT, properties: { order_id: { type: Type.STRING } }, required: ["order_id"] },
      },
      {
        name: "refund",
        description: "Refund an order in full.",
        parameters: { type: Type.OBJECT, properties: { order_id: { type: Type.STRING }, amount: { type: Type.NUMBER } }, required: ["order_id", "amount"] },
      },
    ],
  },
];

/** Joins streamed parts the way an app keeps its history: consecutive text pieces into one part. */
function appendPart(parts: Part[], part: Part): void {
  const last = parts[parts.length - 1];
  if (part.text !== undefined && Object.keys(part).length === 1 && last?.text !== undefined && Object.keys(last).length === 1) last.text += part.text;
  else parts.push({ ...part });
}

/**
 * `@google/genai`: `models.generateContent` or `models.generateContentStream` in a function-calling loop.
 * The SDK takes no `fetch` option, so the global one is swapped for the tracking fetch during the run.
 */
const genaiSdk: ProviderRunner = async ({ key, stream, desk, fetch }) => {
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: dev.url } });
  const contents: Content[] = [{ role: "user", parts: [{ text: PROMPT }] }];
  const config = { systemInstruction: "You are a refund desk.", tools };
  const saved = globalThis.fetch;
  globalThis.fetch = fetch;
  try {
    for (let turn = 0; turn < 6; turn++) {
      const parts: Part[] = [];
      if (stream) {
        for await (const chunk of await ai.models.generateContentStream({ model: "gemini-compat", contents, config })) {
          for (const part of chunk.candidates?.[0]?.content?.parts ?? []) appendPart(parts, part);
        }
      } else {
        const reply = await ai.models.generateContent({ model: "gemini-compat", contents, config });
        parts.push(...(reply.candidates?.[0]?.content?.parts ?? []));
      }
      contents.push({ role: "model", parts });
      const calls = parts.filter((p) => p.functionCall);
      if (calls.length === 0) return parts.map((p) => p.text ?? "").join("");
      contents.push({
        role: "user",
        parts: calls.map(({ functionCall }) => {
          const args = (functionCall?.args ?? {}) as { order_id: string; amount: number };
          const output = functionCall?.name === "get_order" ? desk.getOrder(args.order_id) : desk.refund(args.order_id, args.amount);
          return { functionResponse: { name: functionCall?.name, response: JSON.parse(output) as Record<string, unknown> } };
        }),
      });
    }
  } finally {
    globalThis.fetch = saved;
  }
  throw new Error("the agent did not finish");
};

/**
 * The `openai` package on Gemini's OpenAI-compatible endpoint (`baseURL: <worker>/v1beta/openai`, the Gemini key as
 * its `apiKey`): `chat.completions.create`, or the `chat.completions.stream` helper, in a hand-written tool loop.
 * The scripted Gemini server answers that route with the scripted chat model's refund desk.
 */
const openaiOnGemini: ProviderRunner = async ({ key, stream, desk, fetch }) => {
  const openai = new OpenAI({ apiKey: key, baseURL: `${dev.url}/v1beta/openai`, maxRetries: 0, fetch });
  const history: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: PROMPT }];
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: "function", function: { name: "get_order", parameters: GET_ORDER_SCHEMA } },
    { type: "function", function: { name: "refund", parameters: REFUND_SCHEMA } },
  ];
  for (let turn = 0; turn < 6; turn++) {
    const body = { model: "gemini-openai-compat", messages: history, tools };
    const completion = stream ? await openai.chat.completions.stream(body).finalChatCompletion() : await openai.chat.completions.create(body);
    const message = completion.choices[0].message;
    history.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
    if (!message.tool_calls?.length) return message.content ?? "";
    for (const call of message.tool_calls) {
      if (call.type !== "function") continue;
      const args = JSON.parse(call.function.arguments) as { order_id: string; amount: number };
      const output = call.function.name === "get_order" ? desk.getOrder(args.order_id) : desk.refund(args.order_id, args.amount);
      history.push({ role: "tool", tool_call_id: call.id, content: output });
    }
  }
  throw new Error("the agent did not finish");
};

describe("compatibility: @google/genai (Gemini API) through wrangler dev", () => {
  providerMatrixRow("google-genai generateContent", /^\/v1beta\/models\/[^/]+:(generateContent|streamGenerateContent)$/, () => model.generations(), genaiSdk);
  providerMatrixRow("openai on Gemini's OpenAI-compatible endpoint", /^\/v1beta\/openai\/chat\/completions$/, () => model.generations(), openaiOnGemini);

  it("Should forward x-goog-api-key and alt=sse unchanged on a miss", async () => {
    const key = `gm-forward-${crypto.randomUUID().slice(0, 8)}`;
    const seen = model.requests.length;
    await genaiSdk({ key, stream: true, desk: new Desk("shipped"), fetch: globalThis.fetch });
    expect(model.requests[seen].headers["x-goog-api-key"]).toBe(key);
    expect(model.requests[seen].url).toBe("/v1beta/models/gemini-compat:streamGenerateContent?alt=sse");
    expect(model.requests[seen].headers["muscle-mem-cache"]).toBeUndefined();
  });
});
