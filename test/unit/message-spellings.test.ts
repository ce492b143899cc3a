import { describe, expect, it } from "vitest";
import { parseJsonText } from "../../src/core/body";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest } from "../../src/core/messages";
import { keyResponsesRequest } from "../../src/providers/responses/key";
import { responsesRequest } from "../../src/providers/responses/schema";

/** Numbers inside chat and Responses messages keep their text in the hash (docs/reliability.md, "Numbers"). */

const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };

function responsesKey(raw: string): string[] {
  const { body } = parseJsonText(raw, responsesRequest);
  const keyed = keyResponsesRequest(body, scope, { raw });
  if (!keyed.ok) throw new Error("not keyed");
  return keyed.key.path.map((step) => `${step.hash} ${step.json}`);
}

function chatKey(raw: string): string[] {
  const { body } = parseJsonText(raw, chatRequest);
  const keyed = keyRequest(body, "t", "default", 900_000, { raw });
  if (!keyed.ok) throw new Error("not keyed");
  return keyed.key.path.map((step) => `${step.hash} ${step.json}`);
}

describe("numbers in messages keep their text in the hash, never in the stored node", () => {
  it("Should hash a Responses item's number at its place in its assistant run, and store the item as before", () => {
    const input = (n: string, second: string) =>
      `{"model":"m","input":[{"role":"user","content":"go"},{"type":"reasoning","id":"rs_1","summary":[],"effort":${n}},{"type":"message","role":"assistant","content":"ok","weight":${second}},{"role":"user","content":"next"}]}`;
    const plain = responsesKey(input("1", "2"));
    const spelled = responsesKey(input("1", "2.0"));
    expect(spelled[0]).toBe(plain[0]);
    expect(spelled[1].split(" ")[0]).not.toBe(plain[1].split(" ")[0]);
    // Stored as the value, as before: only the hash reads the text.
    expect(spelled[1].slice(33)).toBe(plain[1].slice(33));
    // The same text on the run's first item is another key than on its second.
    expect(responsesKey(input("1.0", "2"))[1]).not.toBe(spelled[1]);
  });

  it("Should hash a chat message field's number with its text, and key the same text alike", () => {
    const raw = (w: string) => `{"model":"m","messages":[{"role":"user","content":"x","weight":${w}},{"role":"assistant","content":"y"}]}`;
    expect(chatKey(raw("1.0"))[0]).not.toBe(chatKey(raw("1"))[0]);
    expect(chatKey(raw("1.0"))[0].slice(33)).toBe(chatKey(raw("1"))[0].slice(33));
    expect(chatKey(raw("1.0"))).toEqual(chatKey(raw("1.0")));
    expect(chatKey(raw("1"))).toEqual(chatKey(JSON.stringify(JSON.parse(raw("1")))));
  });
});
