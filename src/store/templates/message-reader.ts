import type { CanonicalMessage } from "../../core/messages";
import { BoundedMemo } from "../../core/memo";
import { hashForm } from "../../cache/templates/declared";
import { chatViewOf, type TemplateView } from "../../cache/templates/view";

/**
 * How learning reads a tree's stored message texts: as chat's canonical messages, as stored (`stored`: tool-call
 * arguments as the model wrote them) and in hash form (`hashForm`). A chat tree's texts are chat messages; another
 * API's are read through its view (src/cache/templates/view.ts), and a text with no view throws (`NoChatView`):
 * a recording or partner that holds one teaches nothing.
 */
export interface MessageReader {
  stored(json: string): CanonicalMessage;
  hashForm(json: string): CanonicalMessage;
  /** A new recording's answer (not memoised: it is read once). */
  answer(json: string): CanonicalMessage;
}

/** A stored message that has no chat view: templates do not read it. */
export class NoChatView extends Error {
  constructor(api: string) {
    super(`a stored ${api} message has no chat view`);
  }
}

/**
 * Messages parsed from their JSON text, as stored and in hash form, isolate-wide and bounded (2M characters of
 * JSON, oldest out first): a tree's recordings share their path's first messages (a long system prompt), and a
 * partner's path is read again by each recording paired with it. Keyed by the text itself (and the view's API),
 * so a hit is exactly what reading that text gives; the messages are never changed once parsed, and so the
 * per-message memos of learning (decomposeOnce, name ties) carry across recordings.
 */
const parsed = { stored: new BoundedMemo<CanonicalMessage>(1 << 20, () => 0), hashForm: new BoundedMemo<CanonicalMessage>(1 << 20, () => 0) };

/** Forgets every parsed message (a benchmark's rounds start cold). */
export function forgetParsed(): void {
  parsed.stored.clear();
  parsed.hashForm.clear();
}

/** The chat message a chat tree's stored JSON text holds (shared: never change it). */
export function storedMessage(json: string): CanonicalMessage {
  let message = parsed.stored.get(json);
  if (!message) parsed.stored.set(json, (message = JSON.parse(json) as CanonicalMessage));
  return message;
}

/** The hash form of the chat message a chat tree's JSON text holds (shared: never change it). */
export function hashFormMessage(json: string): CanonicalMessage {
  let message = parsed.hashForm.get(json);
  if (!message) parsed.hashForm.set(json, (message = hashForm(JSON.parse(json) as CanonicalMessage)));
  return message;
}

const CHAT_READER: MessageReader = { stored: storedMessage, hashForm: hashFormMessage, answer: (json) => JSON.parse(json) as CanonicalMessage };

/** A view's reader: the text's chat view (memoised under the view's API), or NoChatView. */
function viewReader(view: TemplateView): MessageReader {
  const storedOf = (json: string): CanonicalMessage => {
    const key = `${view.api}\n${json}`;
    let message = parsed.stored.get(key);
    if (!message) {
      const chat = chatViewOf(view, JSON.parse(json));
      if (!chat) throw new NoChatView(view.api);
      parsed.stored.set(key, (message = chat));
    }
    return message;
  };
  return {
    stored: storedOf,
    answer(json) {
      const chat = chatViewOf(view, JSON.parse(json));
      if (!chat) throw new NoChatView(view.api);
      return chat;
    },
    hashForm(json) {
      const key = `${view.api}\n${json}`;
      let message = parsed.hashForm.get(key);
      if (!message) parsed.hashForm.set(key, (message = hashForm(storedOf(json))));
      return message;
    },
  };
}

const readers = new WeakMap<TemplateView, MessageReader>();

/** The reader of a tree whose API reads through `view` (null or absent: a chat tree). */
export function messageReader(view: TemplateView | null | undefined): MessageReader {
  if (!view) return CHAT_READER;
  let reader = readers.get(view);
  if (!reader) readers.set(view, (reader = viewReader(view)));
  return reader;
}
