import { describe, expect, it } from "vitest";
import { addBodySpellings, bodySpellings, NUMBERS_KEY } from "../../src/core/number-text";

/**
 * The chat and Responses frames read only the spellings outside the conversation list, so they skip the
 * list unread: what they find must be exactly the `top` of a full read, whatever the list holds (strings
 * with brackets, braces, escaped quotes and backslashes, nested values, numbers spelled otherwise).
 */
const bodies = [
  '{"temperature": 1.0, "messages": [{"role": "user", "content": "a ] } [ { \\" \\\\"}], "top_p": 0.50}',
  '{"messages":[{"n":2.50,"m":[[1.0],{"x":"]\\\\"}]},"s"],"max_tokens":1e3,"tools":[{"p":{"maximum":10.0}}]}',
  '{"model":"m","messages":[],"n":1,"x":{"y":[1.10,"2.0"]}}',
  '{"messages":"not a list","t":3.0}',
  '{"a":1.0,"messages":[{"content":"price: 10.50"}]}',
];

describe("addBodySpellings skips the conversation list", () => {
  it.each(bodies)("adds exactly the full read's top spellings for %s", (raw) => {
    JSON.parse(raw);
    const full = bodySpellings(raw, "messages");
    const frame: Record<string, unknown> = Object.fromEntries(Object.keys(JSON.parse(raw) as object).map((k) => [k, true]));
    addBodySpellings(frame, raw, "messages");
    const top = (full?.top ?? []).filter(([pointer]) => pointer.split("/")[1] !== "messages");
    expect(frame[NUMBERS_KEY]).toEqual(top.length > 0 ? top : undefined);
    expect(bodySpellings(raw, "messages", false)?.top ?? []).toEqual(full?.top ?? []);
  });
});
