import { canonicalJson, ToolCallIds } from "../core/canonical";
import { childHash, digest } from "../core/hash";
import type { StoredAnswer } from "../core/answer";
import type { CanonicalMessage } from "../core/messages";
import { BINDINGS_HEADER } from "../core/protocol";
import type { RecordInput } from "../core/recording";
import type { RequestKey } from "../cache/request-key";
import type { ProviderKey, TemplateHook, TemplatePlan } from "../cache/provider";
import { headerSafe } from "../cache/templates/miss-reason";
import type { TemplateSettings } from "../cache/templates/settings";
import { hashReadMore } from "../cache/templates/spelled";
import { declaredViewKey, declaredViewRecording, type ViewDeclared } from "../cache/templates/view-declared";
import { apiMessageOf, CHAT_STOPS, chatViewOf, readChatView, withoutEnvelope, type TemplateView } from "../cache/templates/view";
import { treeLearnerOf } from "../store/objects/tree-objects";
import { forgetTemplatePresence, learnerNews, planTemplates, readBindings } from "./templates";
import { forgetTemplateFree } from "./lookup/childless";
import { keptForChaining, UNKEPT_TEMPLATE } from "./served-answer";

/** Queues a recording for the tree's learner (its own object, in its alarm); forgets what this isolate believed when it learned something new. */
async function learnSoon(env: Env, treeId: string, recorded: RecordInput): Promise<void> {
  const soFar = await treeLearnerOf(env, treeId).learnSoon(recorded);
  // Only a new template can turn "this tree has none" into "it has some"; otherwise keep the memo.
  if (learnerNews(treeId, soFar)) {
    forgetTemplatePresence(treeId);
    forgetTemplateFree(treeId);
  }
}

/** Declared variables (`muscle-mem-bindings`, a malformed header is a 400) and learned templates. */
export const chatTemplates: TemplateHook<RequestKey> = {
  plan(concrete, headers, env, settings) {
    const plan = planTemplates(concrete, readBindings(headers), headers, settings);
    const treeId = plan.key.treeId;
    return {
      key: plan.key,
      render: (answer, store) => plan.render(answer, store),
      // Where the model stops with these values is checked by the plan (stopsBefore, chat's stop rules).
      learned: (db, timeoutMs, presenceTtlMs, hasTemplates) => plan.learned(db, timeoutMs, presenceTtlMs, hasTemplates),
      hitHeaders: plan.hitHeaders,
      templateMiss: () => plan.templateMiss(),
      afterUnrecorded: (db) => plan.unrecorded(db),
      async afterRecord(recorded, db) {
        // A declared answer notes the binding it was given for (a second distinct one lets it serve other values).
        await plan.confirm(db, recorded);
        // An answer the token limit cut teaches no template (it stops elsewhere with other values).
        if (plan.induction && !CHAT_STOPS.cutFinishes.has(recorded.answer.finishReason)) await learnSoon(env, treeId, recorded);
      },
    };
  },
};

/** Why declared variables did not serve on an API whose learned templates read it through a view (docs/templates.md, "Which APIs"). */
export const BINDINGS_NOT_DECLARED = `${BINDINGS_HEADER} is not used on this API (declared templates serve Chat Completions, Anthropic Messages and native Gemini; learned ones serve it): keyed with the values as sent`;

/** The chat key a request of a view's API reads as (the same tree, hashes and h_n; its messages' chat views), or null when one has none. */
export function chatKeyOf(key: ProviderKey, view: TemplateView): RequestKey | null {
  const path: RequestKey["path"] = [];
  for (const step of key.path) {
    const stored: unknown = JSON.parse(step.json);
    // A `muscle-mem:` field on a request's message was sent by the client (only a stored answer carries them):
    // the view leaves it out, so it would read as the message without it.
    if (withoutEnvelope(stored) !== stored) return null;
    const read = readChatView(view, stored);
    if (!read) return null;
    // A step whose hash read more than its stored message (a number sent as `10.0`: the spellings are hashed, never
    // stored) shares its view with the one sent as `10`: a template learned on either must not answer the other
    // (the rule chat's own plan keeps: src/cache/templates/spelled.ts).
    if (hashReadMore(step, read.hashed)) return null;
    path.push({ hash: step.hash, parent: step.parent, role: read.chat.role, json: step.json, message: read.chat });
  }
  const { tenant, namespace, treeId, frameJson, model } = key;
  return { tenant, namespace, treeId, frameJson, model, path, key: key.key, ids: new ToolCallIds() };
}

/** Whether a recording's answer reads through the view (its path does when the request's chat key was read) and was not cut by the token limit; else it teaches nothing: not queued. */
function answerReadable(view: TemplateView, recorded: RecordInput): boolean {
  if (view.cutFinishes.has(recorded.answer.finishReason)) return false;
  try {
    return chatViewOf(view, JSON.parse(recorded.answer.json)) !== null;
  } catch {
    return false;
  }
}

/** Where a view's learned answer goes: what the request is keyed as, and where a reason not to serve it is noted. */
interface ViewAnswerOf<K extends ProviderKey> {
  view: TemplateView;
  key: K;
  noteMiss(reason: string): void;
}

/**
 * A learned template's answer (its chat view, rendered with the request's values by the chat plan, which also
 * checked where the model stops with them) in the view's API form, or null (noted): an answer with no API form, or
 * one the client may chain on that could not be kept.
 */
async function viewLearned<K extends ProviderKey>(
  at: ViewAnswerOf<K>,
  found: { answer: StoredAnswer; template: string } | null,
  db: D1Database,
  timeoutMs: number,
): Promise<{ answer: StoredAnswer; template: string } | null> {
  if (!found) return null;
  const { view, key } = at;
  // Where the model stops with these values was checked by the chat plan (planTemplates, with the view's stop rules).
  const message = apiMessageOf(view, found.answer.message);
  if (message === null) {
    at.noteMiss(headerSafe(`template ${found.template}'s answer has no ${view.api} form: not served`));
    return null;
  }
  const hash = childHash(key.key, canonicalJson(view.hashForm(message)));
  // A client that may chain on the answer's id gets it only once it is kept (./served-answer.ts).
  if (key.chain && !(await keptForChaining(db, timeoutMs, key, key.chain, hash, message))) {
    at.noteMiss(UNKEPT_TEMPLATE);
    return null;
  }
  return { answer: { ...found.answer, hash, message: message as CanonicalMessage }, template: found.template };
}

/**
 * Declared variables on a view's API (src/cache/templates/view-declared.ts): the request keyed in its declared
 * tree, its chat view planned as chat's declared request is (evidence, confirmation, the view's stop rules), its
 * answers stored with placeholders and rendered back in the API's form. Null when the declared key has no chat
 * key (then the request stays concrete).
 */
function declaredViewPlan<K extends ProviderKey>(
  view: TemplateView,
  declared: ViewDeclared<K>,
  headers: Headers,
  env: Env,
  settings: TemplateSettings,
): TemplatePlan<K> | null {
  const chatKey = chatKeyOf(declared.key, view);
  if (!chatKey) return null;
  const chat = planTemplates({ ...chatKey, declared: declared.keying }, null, headers, settings, view);
  const key = declared.key;
  let miss: string | null = null;
  // The id of an answer the model gave that has no chat view: unstored, and evidence that it answered otherwise.
  let unviewable: string | undefined;
  const at: ViewAnswerOf<K> = { view, key, noteMiss: (reason) => void (miss ??= reason) };
  return {
    key,
    hitHeaders: chat.hitHeaders,
    async render(answer, store) {
      const message = chatViewOf(view, answer.message);
      const rendered = message && (await chat.render({ ...answer, message }, store));
      if (!rendered) {
        if (!message) miss ??= `declared answer has no chat view (${view.api}): not served`;
        return null;
      }
      const api = renderedApiMessage(view, rendered.message);
      if (api === null) miss ??= `declared answer has no ${view.api} form with these values: not served`;
      return api === null ? null : { ...rendered, message: api };
    },
    learned: async (db, timeoutMs, presenceTtlMs, hasTemplates) =>
      viewLearned(at, await chat.learned(db, timeoutMs, presenceTtlMs, hasTemplates), db, timeoutMs),
    templateMiss: () => miss ?? chat.templateMiss(),
    recording(recorded) {
      const stored = declaredViewRecording(view, declared.keying, recorded);
      if (stored !== "unviewable") return stored;
      unviewable = digest(`declared-unviewable\u0000${recorded.answer.parent}\u0000${recorded.answer.json}`);
      return null;
    },
    afterUnrecorded: (db) => chat.unrecorded(db, unviewable),
    async afterRecord(recorded, db) {
      // The binding this answer was given for is noted (a second distinct one lets it serve other values).
      await chat.confirm(db, recorded);
      if (chat.induction && answerReadable(view, recorded)) await learnSoon(env, key.treeId, recorded);
    },
  };
}

/** A rendered chat view in the API's form (apiMessageOf), or null. */
function renderedApiMessage(view: TemplateView, chat: CanonicalMessage): CanonicalMessage | null {
  const message = apiMessageOf(view, chat);
  return message === null ? null : (message as CanonicalMessage);
}

/**
 * Learned templates for an API whose messages read as chat's through `view` (src/cache/templates/view.ts): the
 * request is matched as its chat view, a template's answer is served in the API's own form (when it reads back
 * as the same view), and a recording is learned from in the tree's learner, which reads the tree through the same
 * view (src/store/templates/message-reader.ts). Declared variables are read on Anthropic Messages and native
 * Gemini (declaredViewPlan; a request whose declared form does not go through the view stays concrete); on
 * Responses a request that sends them is keyed with the values as sent, and told so on a miss. A key with a
 * `chain` (the client may chain on the answer's id) is served a template's answer only once it is kept
 * (./served-answer.ts).
 */
export function viewTemplates<K extends ProviderKey>(view: TemplateView): TemplateHook<K> {
  return {
    plan(key: K, headers: Headers, env: Env, settings: TemplateSettings): TemplatePlan<K> {
      const bindings = readBindings(headers);
      const declaring = bindings !== null && view.declares;
      const declared = declaring ? declaredViewKey(key, chatKeyOf(key, view), bindings, view) : null;
      const declaredPlan = declared && declaredViewPlan(view, declared, headers, env, settings);
      if (declaredPlan) return declaredPlan;
      const declaredNote = bindings && !declaring ? BINDINGS_NOT_DECLARED : null;
      // The request's chat view is read only when a template is looked up or a recording queued (never on an exact hit).
      let planned: { chat: ReturnType<typeof planTemplates> | null } | undefined;
      const chatPlan = () => {
        if (!planned) {
          const chatKey = chatKeyOf(key, view);
          planned = { chat: chatKey ? planTemplates(chatKey, null, headers, settings, view) : null };
        }
        return planned.chat;
      };
      let miss: string | null = null;
      const at: ViewAnswerOf<K> = { view, key, noteMiss: (reason) => void (miss ??= reason) };
      return {
        key,
        render: (answer) => answer,
        hitHeaders: {},
        async learned(db, timeoutMs, presenceTtlMs, hasTemplates) {
          const chat = chatPlan();
          if (!chat) {
            if (settings.induction)
              miss ??= headerSafe(
                `a message of this request has no chat view (${view.api}), or a number in it was sent spelled otherwise: learned templates do not read it`,
              );
            return null;
          }
          return viewLearned(at, await chat.learned(db, timeoutMs, presenceTtlMs, hasTemplates), db, timeoutMs);
        },
        // A client that sent declared variables is told first that they were not used.
        templateMiss: () => declaredNote ?? planned?.chat?.templateMiss() ?? miss,
        async afterRecord(recorded) {
          if (chatPlan()?.induction && answerReadable(view, recorded)) await learnSoon(env, key.treeId, recorded);
        },
      };
    },
  };
}
