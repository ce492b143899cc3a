import { startScriptedAnthropic } from "../../scripted-anthropic";
import { startScriptedGeminiModel } from "../../scripted-gemini-model";
import type { ChatBody, ScriptedMessage } from "../../scripted-model";
import { startScriptedResponsesModel } from "../../scripted-responses-model";
import type { Chat } from "../run";
import {
  anthropicAnswerOf,
  anthropicHeaders,
  anthropicReplyOf,
  anthropicRequest,
  anthropicShape,
  chatOfAnthropicAnswer,
  chatOfAnthropicRequest,
} from "./anthropic";
import { chatCompletion } from "./chat-parts";
import { chatOfGeminiAnswer, chatOfGeminiRequest, geminiAnswerOf, geminiHeaders, geminiReplyOf, geminiRequest, geminiShape } from "./gemini";
import { chatOfResponsesAnswer, chatOfResponsesRequest, responsesAnswerOf, responsesReplyOf, responsesRequest, responsesShape } from "./responses";

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
  /** What an answer shows the client, ids aside, and the answer the scripted upstream gives for a chat answer. */
  shape(json: unknown): unknown;
  answerOf(message: ScriptedMessage): unknown;
  start(script: (body: ChatBody) => ScriptedMessage): Promise<ApiUpstream>;
}

const TRANSLATIONS: Record<Exclude<EvalApiName, "chat">, Translation> = {
  anthropic: {
    request: anthropicRequest,
    headers: anthropicHeaders,
    answer: chatOfAnthropicAnswer,
    shape: anthropicShape,
    answerOf: anthropicAnswerOf,
    async start(script) {
      const model = await startScriptedAnthropic({ script: (body) => anthropicReplyOf(script(chatOfAnthropicRequest(body))) });
      return { vars: { ANTHROPIC_BASE_URL: model.url }, close: model.close };
    },
  },
  responses: {
    request: responsesRequest,
    headers: (h) => h,
    answer: chatOfResponsesAnswer,
    shape: responsesShape,
    answerOf: responsesAnswerOf,
    async start(script) {
      const model = await startScriptedResponsesModel({ script: (body) => responsesReplyOf(script(chatOfResponsesRequest(body))) });
      return { vars: { UPSTREAM_BASE_URL: model.url }, close: model.close };
    },
  },
  gemini: {
    request: geminiRequest,
    headers: geminiHeaders,
    answer: chatOfGeminiAnswer,
    shape: geminiShape,
    answerOf: geminiAnswerOf,
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

/** An answer whose API form differs from the form the scripted model gives for the script's own answer (ids aside). */
export interface ShapeMismatch {
  /** `model`, `hit` or the template that served it. */
  by: string;
  served: string;
  expected: string;
}

/**
 * The `Chat` run.ts calls, sent on `api`'s route of the Worker at `workerUrl`: the answer comes back as a chat
 * completion with the Worker's `muscle-mem-*` headers; anything but a 200 comes back as it was. `onHeaders`
 * sees every answer's headers (the template-miss reasons). With `truth` (the script), each answer is also
 * compared in the API's own form with what the scripted model answers (ids aside), stricter than run.ts's
 * chat comparison (block and part structure, argument texts as written): a difference goes to `onShape`.
 */
export function apiChat(
  api: Exclude<EvalApiName, "chat">,
  workerUrl: string,
  watch: { onHeaders?: (headers: Headers) => void; truth?: (body: ChatBody) => ScriptedMessage; onShape?: (m: ShapeMismatch) => void } = {},
): Chat {
  const t = TRANSLATIONS[api];
  return async (body, headers) => {
    const { path, body: sent } = t.request(body as ChatBody);
    const res = await fetch(`${workerUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...t.headers(headers) },
      body: JSON.stringify(sent),
    });
    const text = await res.text();
    watch.onHeaders?.(res.headers);
    if (res.status !== 200) return new Response(text, { status: res.status });
    const json: unknown = JSON.parse(text);
    if (watch.truth && watch.onShape) {
      const served = JSON.stringify(t.shape(json));
      const expected = JSON.stringify(t.shape(t.answerOf(watch.truth(body as ChatBody))));
      const by = res.headers.get("muscle-mem-template") ?? res.headers.get("muscle-mem-cache") ?? "model";
      if (served !== expected) watch.onShape({ by, served, expected });
    }
    const kept = new Headers({ "content-type": "application/json" });
    for (const [k, v] of res.headers) if (k.startsWith("muscle-mem-")) kept.set(k, v);
    return new Response(JSON.stringify(chatCompletion(t.answer(json))), { status: 200, headers: kept });
  };
}
