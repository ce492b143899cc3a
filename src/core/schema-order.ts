import { escapeToken } from "./number-text";

/**
 * The order of a JSON Schema's `properties`, which canonical JSON sorts away but a model reads: under
 * structured outputs the model writes its JSON in the schema's property order (OpenAI: "outputs will be
 * produced in the same order as the ordering of keys in the schema"), so a schema that puts `reasoning`
 * before `answer` is answered otherwise than one that puts it after. The frame keys that order for every
 * field but the tool definitions (docs/reliability.md, "What is in the key").
 */

/** The frame key of the property orders of a request's schemas (absent when every one is sorted). */
export const ORDER_KEY = "muscle-mem:order";

/** Why a request whose property order cannot be read from its parsed body bypasses the cache. */
export const INTEGER_PROPERTY = "integer-like property name";

/** An array-index-like key, which JavaScript objects put first, in ascending order, whatever the text's order. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const sorted = (keys: readonly string[]) => keys.every((k, i) => i === 0 || keys[i - 1] < k);

/**
 * Every `properties` object in `value` whose keys are not in sorted order, as its JSON pointer and its keys
 * in the order sent; `ambiguous` when one of two keys or more holds an array-index-like key (`"1"`), whose
 * place in the text JSON.parse does not keep. Pure; iterative, so deep schemas cannot overflow the stack.
 *
 * @example propertyOrders({ properties: { b: {}, a: {} } }, "/s") // { orders: { "/s/properties": ["b", "a"] }, ambiguous: false }
 */
export function propertyOrders(value: unknown, at: string): { orders: Record<string, string[]>; ambiguous: boolean } {
  const orders: Record<string, string[]> = {};
  let ambiguous = false;
  const stack: Array<[unknown, string, boolean]> = [[value, at, false]];
  while (stack.length > 0) {
    const [node, pointer, isProperties] = stack.pop()!;
    if (Array.isArray(node)) {
      node.forEach((item, i) => stack.push([item, `${pointer}/${i}`, false]));
      continue;
    }
    if (!isObject(node)) continue;
    const keys = Object.keys(node);
    if (isProperties && keys.length > 1) {
      if (keys.some((k) => INDEX_KEY.test(k))) ambiguous = true;
      else if (!sorted(keys)) orders[pointer] = keys;
    }
    for (const key of keys) stack.push([node[key], `${pointer}/${escapeToken(key)}`, key === "properties"]);
  }
  return { orders, ambiguous };
}

/**
 * The property orders of every field of `frame` but those in `skip` (the tool definitions, whose order
 * only changes the order a call's arguments are written in, which the key already reads as one call) and
 * the frame's own `muscle-mem:…` entries. Pure.
 */
function frameOrders(frame: Record<string, unknown>, skip: ReadonlySet<string>): { orders: Record<string, string[]>; ambiguous: boolean } {
  const orders: Record<string, string[]> = {};
  let ambiguous = false;
  for (const [field, value] of Object.entries(frame)) {
    if (skip.has(field) || field.startsWith("muscle-mem:") || typeof value !== "object" || value === null) continue;
    const found = propertyOrders(value, `/${escapeToken(field)}`);
    Object.assign(orders, found.orders);
    ambiguous ||= found.ambiguous;
  }
  return { orders, ambiguous };
}

/**
 * Adds to `frame` the property orders of its schemas (ORDER_KEY), when one is not sorted; a frame with
 * none is keyed as before. An imported line's frame may carry the entry already (an exported frame holds
 * its schemas sorted, and the entry beside them): it is kept when the schemas say nothing.
 */
export function addPropertyOrders(frame: Record<string, unknown>, skip: ReadonlySet<string>): void {
  const { orders } = frameOrders(frame, skip);
  if (Object.keys(orders).length > 0) frame[ORDER_KEY] = orders;
}

/**
 * Why a request's schemas cannot be keyed with their order (INTEGER_PROPERTY), or null; `skip` names the
 * body's fields not read: the conversation, the transport fields and the tool definitions.
 */
export function propertyOrderBypass(body: object, skip: ReadonlySet<string>): string | null {
  return frameOrders(body as Record<string, unknown>, skip).ambiguous ? INTEGER_PROPERTY : null;
}
