import { canonicalJson } from "../../core/canonical";
import { childHash } from "../../core/hash";
import type { CanonicalMessage } from "../../core/messages";
import type { PathNode, RecordInput } from "../../core/recording";
import type { ProviderKey } from "../provider";
import type { RequestKey } from "../request-key";
import type { Bindings } from "./bindings";
import { keyDeclaredAnswer, withDeclared, type DeclaredKeying } from "./declared";
import { apiMessageOf, readChatView, type TemplateView } from "./view";

/**
 * Declared variables (`muscle-mem-bindings`) on an API whose messages read as chat's through a template view
 * (./view.ts: Anthropic Messages, native Gemini; docs/templates.md, "Which APIs"). The request's chat view is
 * keyed with placeholders as chat's is (./declared.ts withDeclared); each declared message is taken back to the
 * API's form (apiMessageOf: the round-trip rule) and hashed as the API hashes its messages, in the declared tree
 * (its frame keeps `muscle-mem:api`, so the tree reads as any tree of that API). Anything that does not go
 * through is keyed concretely: in doubt, a miss. Pure; never throws.
 */

/** A request of a view's API keyed in its declared tree, and the chat keying that stores and renders its answers. */
export interface ViewDeclared<K extends ProviderKey> {
  key: K;
  keying: DeclaredKeying;
}

/**
 * `keyed` (a chat message keyed with placeholders: chat's hash form, which leaves out empty fields) with the empty
 * fields of `view` (the chat view it was keyed from) put back: an empty `content` list, a null, an empty text. They
 * hold no value, and a view reads them (an Anthropic answer of tool calls alone has `content: []`).
 */
function withEmpties(view: CanonicalMessage, keyed: CanonicalMessage): CanonicalMessage {
  const empties = Object.entries(view).filter(([k, v]) => !(k in keyed) && (v === null || v === "" || (Array.isArray(v) && v.length === 0)));
  return empties.length === 0 ? keyed : ({ ...Object.fromEntries(empties), ...keyed } as CanonicalMessage);
}

/** The API's stored JSON and hash of one message (the view's hash form, as the API's own key reads it). */
function stepOf(view: TemplateView, parent: string, message: unknown): { hash: string; json: string } {
  return { hash: childHash(parent, canonicalJson(view.hashForm(message))), json: canonicalJson(message) };
}

/**
 * `key` (a request of the view's API) in its declared tree for `bindings`, or null when it stays concrete: it has
 * no chat key (`chatKey` null), withDeclared keys it concretely, or a declared message has no API form that reads
 * back as the same view. The API key's other fields (its tool ids, its model) are kept.
 */
export function declaredViewKey<K extends ProviderKey>(key: K, chatKey: RequestKey | null, bindings: Bindings, view: TemplateView): ViewDeclared<K> | null {
  if (!chatKey || chatKey.path.length !== key.path.length) return null;
  const declared = withDeclared(chatKey, bindings);
  if (!declared?.declared) return null;
  const keying = declared.declared;
  const path: PathNode[] = [];
  let parent = keying.treeId;
  for (const [i, step] of declared.path.entries()) {
    const message = apiMessageOf(view, withEmpties(chatKey.path[i].message, step.message));
    if (message === null) return null;
    const node = stepOf(view, parent, message);
    path.push({ hash: node.hash, parent, role: key.path[i].role, json: node.json });
    parent = node.hash;
  }
  if (path.length === 0) return null;
  return { key: { ...key, treeId: keying.treeId, frameJson: keying.frameJson, path, key: parent }, keying };
}

/**
 * The recording of a declared request's answer as its declared tree stores it: the answer's chat view with
 * placeholders put in (keyDeclaredAnswer: null when a value in it cannot be attributed), back in the API's form,
 * hashed as the API hashes an answer under h_n. The `muscle-mem:` fields stored around the answer are left out
 * (a template's answer is served without them). `unviewable` when the answer has no chat view (nothing could be
 * checked in it); null when keyDeclaredAnswer refused it (unstoredAnswerOf names it) or its declared form has
 * no API form.
 */
export function declaredViewRecording(view: TemplateView, keying: DeclaredKeying, recorded: RecordInput): RecordInput | null | "unviewable" {
  let stored: unknown;
  try {
    stored = JSON.parse(recorded.answer.json);
  } catch {
    return "unviewable";
  }
  const read = readChatView(view, stored);
  if (!read) return "unviewable";
  const keyed = keyDeclaredAnswer(recorded.answer.parent, read.chat, keying);
  if (!keyed) return null;
  const message = apiMessageOf(view, withEmpties(read.chat, keyed.message));
  if (message === null) return null;
  const node = stepOf(view, recorded.answer.parent, message);
  return { ...recorded, answer: { ...recorded.answer, hash: node.hash, json: node.json } };
}
