import { describe, expect, it } from "vitest";
import { chatKeyOf } from "../../src/engine/template-hook";
import { anthropicTemplateView } from "../../src/providers/anthropic/template-view";
import { keyMessagesRequest } from "../../src/providers/anthropic/key";
import type { MessagesRequest } from "../../src/providers/anthropic/schema";

/** An Anthropic conversation whose echoed tool call holds a quantity written as `qty` (its raw JSON text). */
function keyed(qty: string, userExtra = "") {
  const raw = `{"model":"claude-x","max_tokens":64,"messages":[{"role":"user",${userExtra}"content":"Order two mugs"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"order","input":{"item":"mug","qty":${qty}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}]}`;
  const body = JSON.parse(raw) as MessagesRequest;
  const outcome = keyMessagesRequest(body, new Headers({ "anthropic-version": "2023-06-01" }), "t", "default", undefined, {
    url: new URL("http://mm.test/v1/messages"),
    raw,
  });
  if (!outcome.ok) throw new Error("not keyed");
  return outcome.key;
}

describe("a request read through a template view", () => {
  it("Should read as its chat view on the request's own hashes, and have none when a number was sent spelled otherwise (`2.0`): that step's hash read the spelling its stored message does not hold", () => {
    const plain = chatKeyOf(keyed("2"), anthropicTemplateView);
    expect(plain?.path.map((s) => s.hash)).toEqual(keyed("2").path.map((s) => s.hash));
    expect(plain?.path[1].message.tool_calls?.[0].function.arguments).toBe('{"item":"mug","qty":2}');
    const spelled = keyed("2.0");
    // Same stored messages, other hashes: the view alone could not tell them apart.
    expect(spelled.path.map((s) => s.json)).toEqual(keyed("2").path.map((s) => s.json));
    expect(spelled.path[1].hash).not.toBe(keyed("2").path[1].hash);
    expect(chatKeyOf(spelled, anthropicTemplateView)).toBeNull();
  });

  it("Should have no view for a request whose message carries a muscle-mem: field (the client sent it; the view would leave it out)", () => {
    const sent = keyed("2", '"muscle-mem:x":1,');
    expect(sent.path[0].hash).not.toBe(keyed("2").path[0].hash);
    expect(chatKeyOf(sent, anthropicTemplateView)).toBeNull();
  });
});
