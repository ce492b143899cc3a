import { canonicalJson, type CanonicalError } from "../../core/canonical";
import { storedAnswerJson } from "../../core/stored-json";
import { onlyFields } from "../../core/fields";
import { childHash, treeIdOf } from "../../core/hash";
import { oversized } from "../../core/limits";
import { hasLoneSurrogate } from "../../core/unicode";
import type { KeyOutcome, KeyScope, ProviderKey } from "../../cache/provider";
import type { CallIds } from "../responses/canonical";
import { withArgsTexts } from "./args-text";
import { canonicalContent, canonicalContents } from "./canonical";
import { geminiBypassReason, geminiFrameJsonOf } from "./frame";
import { joinedModelTurns, joinedText } from "./model-turns";
import { CANDIDATE_KEY, type Content, type GenerateContentRequest, type GeminiNode } from "./schema";

/** Where a Gemini request sits in the trees, and the call ids its answer is numbered after. */
export interface GeminiKey extends ProviderKey {
  ids: CallIds;
}

function failure(error: CanonicalError): KeyOutcome<GeminiKey> {
  return error.kind === "invalid" ? { ok: false, invalid: { message: error.message, param: error.param } } : { ok: false, bypass: error.reason };
}

/**
 * Keys a validated Gemini request for `model` (from the URL): frame, tree id, canonical contents, path hashes.
 * `url` and `headers` are the live request's (its query and gateway routing headers join the frame); an imported line has none.
 */
export function keyGeminiRequest(body: GenerateContentRequest, model: string, scope: KeyScope, url?: URL, headers?: Headers): KeyOutcome<GeminiKey> {
  const reason = geminiBypassReason(body, url) ?? (hasLoneSurrogate(body) ? "lone surrogate" : null);
  if (reason) return { ok: false, bypass: reason };
  const contents = canonicalContents(body.contents);
  if (!contents.ok) return failure(contents.error);
  const canonical = { ...contents, ...joinedModelTurns(contents.hashed, contents.stored) };
  const frameJson = geminiFrameJsonOf(body, model, url, headers);
  const treeId = treeIdOf(scope.tenant, scope.namespace, frameJson);
  let parent = treeId;
  const path = canonical.hashed.map((node, i) => {
    const hash = childHash(parent, canonicalJson(node));
    const step = { hash, parent, role: node.role, json: canonicalJson(canonical.stored[i]) };
    parent = hash;
    return step;
  });
  const tooLarge = oversized(frameJson, path, scope.maxMessageBytes);
  if (tooLarge) return { ok: false, bypass: tooLarge };
  return { ok: true, key: { tenant: scope.tenant, namespace: scope.namespace, treeId, frameJson, model, path, key: parent, ids: canonical.ids } };
}

const RENDERED_CALL_FIELDS: ReadonlySet<string> = new Set(["name", "id", "argsJson"]);

/**
 * The model's content as the answer node (a child of h_n); null when it is not replayable.
 * `metadata`: the candidate's fields a hit sends back (src/providers/gemini/stream.ts), stored under
 * CANDIDATE_KEY beside the content and left out of the hash, as a client echoes only the content.
 * `argsTexts`: each call's args as written (src/providers/gemini/args-text.ts), stored as `argsJson`, never hashed.
 */
export function keyGeminiAnswer(
  key: GeminiKey,
  content: Content,
  metadata: Record<string, unknown> = {},
  argsTexts: ReadonlyArray<string | undefined> = [],
): { hash: string; json: string; node: GeminiNode } | null {
  if (content.role !== "model") return null;
  const out = canonicalContent(content, key.ids.clone(), "candidate");
  if ("kind" in out || out.stored.parts.length === 0) return null;
  const node = { ...out.stored, parts: withArgsTexts(out.stored.parts, argsTexts) };
  if (node.parts.some((p) => "functionResponse" in p)) return null;
  // A call field a replay does not render (only name, id and args are): not recorded.
  if (node.parts.some((p) => "functionCall" in p && !onlyFields(p.functionCall as object, RENDERED_CALL_FIELDS))) return null;
  const stored = Object.keys(metadata).length > 0 ? { ...node, [CANDIDATE_KEY]: metadata } : node;
  return { hash: childHash(key.key, canonicalJson({ ...out.hashed, parts: joinedText(out.hashed.parts) })), json: storedAnswerJson(stored), node };
}
