/**
 * A shallow check of a chat request as JSON.parse gave it: true only for a body that src/core/messages.ts's
 * `chatRequest` accepts, in the shapes agents send (text or part lists, function tool calls). zod copies
 * every object it validates, and in workerd (no code generation from strings) it walks each message
 * through its general path; a body this check passes is used as parsed. Anything else, valid or not, goes
 * to zod, so every 400 keeps zod's message. It may refuse what zod accepts (a custom tool call, a legacy
 * `function` message, a `function_call`); it must never accept what zod refuses
 * (test/unit/messages-check.test.ts compares both on valid and broken bodies).
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const absentOr = (value: unknown, check: (v: unknown) => boolean): boolean => value === undefined || check(value);
const nullableOr = (value: unknown, check: (v: unknown) => boolean): boolean => value === undefined || value === null || check(value);
const isString = (value: unknown): value is string => typeof value === "string";
const isBoolean = (value: unknown): boolean => typeof value === "boolean";
const isSafeInteger = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value);
const nonEmpty = (value: unknown): boolean => typeof value === "string" && value.length > 0;

/** An array of objects with a string `type` (a content part, a tool). */
function isTypedList(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (!isObject(item) || typeof item.type !== "string") return false;
  return true;
}

const isContent = (value: unknown): boolean => typeof value === "string" || isTypedList(value);

function isToolCall(value: unknown): boolean {
  if (!isObject(value) || !nonEmpty(value.id) || !absentOr(value.type, (t) => t === "function")) return false;
  const fn = value.function;
  return isObject(fn) && typeof fn.name === "string" && typeof fn.arguments === "string";
}

function isMessage(value: unknown): boolean {
  if (!isObject(value)) return false;
  switch (value.role) {
    case "system":
    case "developer":
    case "user":
      return isContent(value.content) && absentOr(value.name, isString);
    case "tool":
      return isContent(value.content) && nonEmpty(value.tool_call_id);
    case "assistant":
      return (
        nullableOr(value.content, isContent) &&
        absentOr(value.name, isString) &&
        nullableOr(value.refusal, isString) &&
        nullableOr(value.tool_calls, (calls) => Array.isArray(calls) && calls.every(isToolCall)) &&
        (value.function_call === undefined || value.function_call === null)
      );
    default:
      return false;
  }
}

/** True only when `chatRequest.safeParse(json)` succeeds, its output equal to `json` but for key order. */
export function isPlainChatRequest(json: unknown): boolean {
  if (!isObject(json) || !nonEmpty(json.model)) return false;
  const messages = json.messages;
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isMessage)) return false;
  return (
    nullableOr(json.stream, isBoolean) &&
    nullableOr(json.stream_options, (o) => isObject(o) && absentOr(o.include_usage, isBoolean)) &&
    nullableOr(json.n, (n) => isSafeInteger(n) && n > 0) &&
    nullableOr(json.logprobs, isBoolean) &&
    nullableOr(json.top_logprobs, isSafeInteger) &&
    nullableOr(json.modalities, (m) => Array.isArray(m) && m.every(isString)) &&
    nullableOr(json.tools, isTypedList)
  );
}
