import { canonicalArguments, canonicalJson } from "../canonical";
import { childHash, treeIdOf, walk } from "../hash";
import type { RequestKey } from "../key";
import type { CanonicalMessage } from "../messages";
import { distinctValues, type Bindings } from "./bindings";
import { decompose } from "./leaves";
import { hasPlaceholderLike, renderMessage, substituteMessage, textsOf } from "./placeholders";
import { slotTypeOf } from "./slot-types";

/** The frame key under which a declared-template tree lists its variable names. */
export const VARIABLES_FRAME_KEY = "muscle-mem-variables";

/** A request keyed with placeholders, and how to store and render its answers. */
export interface DeclaredKeying {
  treeId: string;
  frameJson: string;
  messages: CanonicalMessage[];
  bindings: Bindings;
}

/**
 * Keys a request with declared variables: its messages with placeholders, in
 * a tree of its own whose frame names the variables. Null when the request
 * must be keyed concretely: two values that equal or contain one another, or
 * messages that already hold placeholder-like text.
 */
export function declaredKeying(tenant: string, namespace: string, frameJson: string, messages: readonly CanonicalMessage[], bindings: Bindings): DeclaredKeying | null {
  if (!distinctValues(bindings)) return null;
  if (messages.some(hasPlaceholderLike)) return null;
  const frame = { ...(JSON.parse(frameJson) as Record<string, unknown>), [VARIABLES_FRAME_KEY]: Object.keys(bindings).sort() };
  const declaredFrame = canonicalJson(frame);
  return {
    treeId: treeIdOf(tenant, namespace, declaredFrame),
    frameJson: declaredFrame,
    messages: messages.map((m) => substituteMessage(m, bindings)),
    bindings,
  };
}

/** A message in the form that is hashed: tool-call arguments in canonical JSON. */
export function hashForm(message: CanonicalMessage): CanonicalMessage {
  if (!message.tool_calls) return message;
  return { ...message, tool_calls: message.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: canonicalArguments(c.function.arguments) } })) };
}

/**
 * The request key in the declared tree for `key` with `bindings`, or null
 * when the request must stay in its concrete tree (see declaredKeying).
 */
export function withDeclared(key: RequestKey, bindings: Bindings): RequestKey | null {
  const keying = declaredKeying(key.tenant, key.namespace, key.frameJson, key.path.map((step) => hashForm(step.message)), bindings);
  if (!keying) return null;
  const path = walk(keying.treeId, keying.messages);
  return { ...key, treeId: keying.treeId, frameJson: keying.frameJson, path, key: path[path.length - 1].hash, declared: keying };
}

/** The model's answer keyed in a declared tree (abstracted), or null when it must not be stored there. */
export function keyDeclaredAnswer(parent: string, answer: CanonicalMessage, keying: DeclaredKeying): { hash: string; json: string; message: CanonicalMessage } | null {
  const stored = abstractAnswer(answer, keying);
  if (!stored) return null;
  const json = canonicalJson(stored);
  return { hash: childHash(parent, json), json, message: stored };
}

const DERIVABLE = new Set(["number", "identifier", "email", "date"]);

/**
 * The answer as it is stored in a declared tree, or null when it must not be
 * stored there because a value in it cannot be attributed:
 *
 * - the answer already holds placeholder-like text;
 * - a bound value is left over after whole-token substitution, in any case
 *   or JSON-escaped (inside a longer token, upper-cased, …);
 * - it holds a number, id, email or date that the keyed request does not
 *   contain: it may be derived from a variable (`1999` -> `19.99`).
 */
export function abstractAnswer(answer: CanonicalMessage, keying: DeclaredKeying): CanonicalMessage | null {
  if (hasPlaceholderLike(answer)) return null;
  const stored = substituteMessage(answer, keying.bindings);
  const rest = textsOf(stored)
    .map((t) => t.replace(/\{\{#?[A-Za-z_][A-Za-z0-9_]*\}\}/g, "\u0000"))
    .join("\u0000")
    .toLowerCase();
  for (const value of Object.values(keying.bindings)) {
    const escaped = JSON.stringify(value).slice(1, -1);
    if (rest.includes(value.toLowerCase()) || rest.includes(escaped.toLowerCase())) return null;
  }
  const known = new Set(keying.messages.flatMap((m) => decompose(m).leaves.map((l) => l.value)));
  for (const leaf of decompose(stored).leaves) {
    if (DERIVABLE.has(slotTypeOf(leaf.value, leaf.kind)) && !known.has(leaf.value)) return null;
  }
  return stored;
}

/** Renders a stored declared answer with the request's values; null (a miss) when it cannot be. */
export function renderDeclared(stored: CanonicalMessage, keying: DeclaredKeying): CanonicalMessage | null {
  return renderMessage(stored, keying.bindings);
}
