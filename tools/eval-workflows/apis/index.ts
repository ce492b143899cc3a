import { startScriptedAnthropic } from "../../scripted-anthropic";
import { startScriptedGeminiModel } from "../../scripted-gemini-model";
import type { ChatBody, ScriptedMessage } from "../../scripted-model";
import { startScriptedResponsesModel } from "../../scripted-responses-model";
import type { Chat } from "../run";
import { anthropicHeaders, anthropicReplyOf, anthropicRequest, chatOfAnthropicAnswer, chatOfAnthropicRequest } from "./anthropic";
import { chatCompletion } from "./chat-parts";
import { chatOfGeminiAnswer, chatOfGeminiRequest, geminiHeaders, geminiReplyOf, geminiRequest } from "./gemini";
import { chatOfResponsesAnswer, chatOfResponsesRequest, responsesReplyOf, responsesRequest } from "./responses";

/**
 * `npm run eval:templates -- --api anthropic|responses|gemini`: the evaluation's chat requests sent on another
 * API's route of the Worker, behind a scripted model that speaks that API and answers with the workflow's script.
 * Each API's translations are pure (anthropic.ts, responses.ts, gemini.ts); this file starts the upstream and
 * wraps the Worker's route as the `Chat` run.ts calls, so that run.ts compares answers as it does for chat.
 */

export const EVAL_APIS = ["chat", "anthropic", "responses", "gemini"] as const;
export type EvalApiName = (typeof EVAL_APIS)[number];

/** A scripted upstream speaking one API: the Worker vars that point at it. */
export interface ApiUpstream {
  vars: Record<string, string>;
  close(): Promise<void>;
}

interface Translation {
  request(body: ChatBody): { path: string; body: unknown };
  headers(headers: Record<string, string>): Record<string, string>;
  answer(json: unknown): ScriptedMessage;
  start(script: (body: ChatBody) => ScriptedMessage): Promise<ApiUpstream>;
}

const TRANSLATIONS: Record<Exclude<EvalApiName, "chat">, Translation> = {
  anthropic: {
    request: anthropicRequest,
    headers: anthropicHeaders,
    answer: chatOfAnthropicAnswer,
    async start(script) {
      const model = await startScriptedAnthropic({ script: (body) => anthropicReplyOf(script(chatOfAnthropicRequest(body))) });
      return { vars: { ANTHROPIC_BASE_URL: model.url }, close: model.close };
    },
  },
  responses: {
    request: responsesRequest,
    headers: (h) => h,
    answer: chatOfResponsesAnswer,
    async start(script) {
      const model = await startScriptedResponsesModel({ script: (body) => responsesReplyOf(script(chatOfResponsesRequest(body))) });
      return { vars: { UPSTREAM_BASE_URL: model.url }, close: model.close };
    },
  },
  gemini: {
    request: geminiRequest,
    headers: geminiHeaders,
    answer: chatOfGeminiAnswer,
    async start(script) {
      const model = await startScriptedGeminiModel({ script: (body, name) => geminiReplyOf(script(chatOfGeminiRequest(body, name))) });
      return { vars: { GEMINI_BASE_URL: model.url }, close: model.close };
    },
  },
};

/** Starts the scripted upstream of `api` answering with `script`. */
export function startApiUpstream(api: Exclude<EvalApiName, "chat">, script: (body: ChatBody) => ScriptedMessage): Promise<ApiUpstream> {
  return TRANSLATIONS[api].start(script);
}

/**
 * The `Chat` run.ts calls, sent on `api`'s route of the Worker at `workerUrl`: the answer comes back as a chat
 * completion with the Worker's `muscle-mem-*` headers; anything but a 200 comes back as it was. `onHeaders`
 * sees every answer's headers (the template-miss reasons).
 */
export function apiChat(api: Exclude<EvalApiName, "chat">, workerUrl: string, onHeaders?: (headers: Headers) => void): Chat {
  const t = TRANSLATIONS[api];
  return async (body, headers) => {
    const { path, body: sent } = t.request(body as ChatBody);
    const res = await fetch(`${workerUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...t.headers(headers) },
      body: JSON.stringify(sent),
    });
    const text = await res.text();
    onHeaders?.(res.headers);
    if (res.status !== 200) return new Response(text, { status: res.status });
    const kept = new Headers({ "content-type": "application/json" });
    for (const [k, v] of res.headers) if (k.startsWith("muscle-mem-")) kept.set(k, v);
    return new Response(JSON.stringify(chatCompletion(t.answer(JSON.parse(text)))), { status: 200, headers: kept });
  };
}
