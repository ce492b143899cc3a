import type { StoredAnswer } from "../../core/answer";
import { keyRequest, type RequestKey } from "../../core/key";
import { chatRequest, type ChatRequest } from "../../core/messages";
import type { ProviderAdapter, TemplateHook } from "../../cache/provider";
import { renderChunkStream, renderCompletion } from "./render";
import { treeLearnerOf } from "../../store/objects/tree-objects";
import { chatAnswerReader } from "./answer-reader";
import { configOf } from "../../config";
import { forgetTemplatePresence, planTemplates, readBindings } from "../../engine/templates";

/** Declared variables (`muscle-mem-bindings`, a malformed header is a 400) and learned templates. */
const chatTemplates: TemplateHook<RequestKey> = {
  plan(concrete, headers, env) {
    const plan = planTemplates(concrete, readBindings(headers), headers, configOf(env).templates);
    const treeId = plan.key.treeId;
    return {
      key: plan.key,
      render: (answer, store) => plan.render(answer, store),
      learned: (db, timeoutMs, presenceTtlMs) => plan.learned(db, timeoutMs, presenceTtlMs),
      hitHeaders: plan.hitHeaders,
      async afterRecord(recorded, db) {
        // A declared answer notes the binding it was given for (a second distinct one lets it serve other values).
        await plan.confirm(db, recorded);
        if (!plan.induction) return;
        // Learning runs in its own object per tree, so that joins and records never queue behind it.
        const learned = await treeLearnerOf(env, treeId).learn(recorded);
        // Only a new template can turn "this tree has none" into "it has some"; otherwise keep the memo.
        if (learned && learned.induced > 0) forgetTemplatePresence(treeId);
      },
    };
  },
};

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`) over the cached flow:
 * upstream `UPSTREAM_BASE_URL`, OpenAI's error envelope, declared and learned
 * templates. Keying and bypass rules: src/core/key.ts.
 */
export const chatAdapter: ProviderAdapter<ChatRequest, RequestKey, StoredAnswer> = {
  name: "chat",
  schema: chatRequest,
  isStream: ({ body }) => body.stream === true,
  key: ({ body, url, headers, raw }, scope) => keyRequest(body, scope.tenant, scope.namespace, scope.maxMessageBytes, { url, headers, raw }),
  upstream: (config) => ({ base: config.upstreamBaseUrl, pathname: "/v1/chat/completions" }),
  answerOf: (stored) => stored,
  render(answer, { body }, stream) {
    const ctx = { id: `chatcmpl-mm${crypto.randomUUID().replaceAll("-", "")}`, model: body.model, created: Math.floor(Date.now() / 1000) };
    if (stream) return { body: renderChunkStream(answer, ctx, body.stream_options?.include_usage === true), contentType: "text/event-stream; charset=utf-8" };
    return { body: JSON.stringify(renderCompletion(answer, ctx)), contentType: "application/json" };
  },
  reader: (key, { raw }) => chatAnswerReader(key, raw.length),
  errorResponse: (error, headers) => error.toResponse(headers),
  templates: chatTemplates,
};
