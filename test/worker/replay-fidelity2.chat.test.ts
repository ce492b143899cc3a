import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";
import { completion, withUpstream, type StubReply } from "./upstream-stub";

/**
 * Answer fidelity, Chat Completions JSON: a hit's message is what the model sent (tool-call ids renewed),
 * down to fields a client's parse tells apart (a call's `index`).
 */

function chat(key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(
    new Request("http://mm.test/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    }),
  );
}

/** The miss's body text (a stream's when `stream`) and a JSON hit's (null when nothing was recorded). */
async function missAndHit(reply: StubReply, stream = false): Promise<{ miss: string; hit: string | null }> {
  const key = `sk-fid2-${crypto.randomUUID()}`;
  const body = { model: uniqueModel("fid2"), messages: [{ role: "user", content: "Refund order A-1." }] };
  const miss = await settled(() => withUpstream(reply, async () => (await chat(key, { ...body, stream })).text()));
  const res = await chat(key, body, { "cache-control": "only-if-cached" });
  const text = await res.text();
  return { miss, hit: res.status === 504 ? null : text };
}

/** The message a client reads, tool-call ids masked. */
function messageOf(text: string): unknown {
  const message = (JSON.parse(text) as { choices: Array<{ message: Record<string, unknown> }> }).choices[0].message;
  const calls = message.tool_calls as Array<Record<string, unknown>> | undefined;
  return { ...message, ...(calls ? { tool_calls: calls.map((call, i) => ({ ...call, id: `call ${i}` })) } : {}) };
}

const refund = (index: number | undefined, id: string) => ({
  ...(index === undefined ? {} : { index }),
  id,
  type: "function",
  function: { name: "refund", arguments: '{"order":"A-1"}' },
});

describe("replay fidelity 2: Chat Completions", () => {
  it("Should serve a JSON answer's call `index` equal to its place as sent (was: dropped)", async () => {
    const message = { role: "assistant", content: null, tool_calls: [refund(0, "c1"), refund(1, "c2")] };
    const out = await missAndHit({ json: completion(message, "tool_calls") });
    expect(out.hit && messageOf(out.hit)).toStrictEqual(messageOf(out.miss));
  });

  it("Should serve calls without `index` without one, and one call's `index` only on that call", async () => {
    const message = { role: "assistant", content: null, tool_calls: [refund(undefined, "c1"), refund(1, "c2")] };
    const out = await missAndHit({ json: completion(message, "tool_calls") });
    expect(out.hit && messageOf(out.hit)).toStrictEqual(messageOf(out.miss));
  });
});

describe("replay fidelity 2: a number's spelling in a served field", () => {
  const answer = (response: string, choice = "", message = "") =>
    `{"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"stub",${response}"choices":[{"index":0,${choice}"message":{"role":"assistant",${message}"content":"Refunded."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"cost":0.00012340}}`;

  it.each([
    ["a response field", answer('"x_vendor":{"score":1.0},')],
    ["a choice field", answer("", '"x_score":2.50,')],
    ["a message field", answer("", "", '"x_weight":1e-07,')],
  ])("Should serve %s as spelled or not record it (was: served as JavaScript spells it)", async (_, text) => {
    const out = await missAndHit({ text });
    const spelling = /1\.0\b|2\.50|1e-07/.exec(text)?.[0];
    expect(out.hit === null || out.hit.includes(`${spelling}`)).toBe(true);
  });

  const chunk = (fields: string, choice = "", delta = '"content":"Refunded."', finish = "null") =>
    `{"id":"c","object":"chat.completion.chunk","created":1,"model":"stub",${fields}"choices":[{"index":0,${choice}"delta":{${delta}},"finish_reason":${finish}}]}`;

  it.each([
    ["a response field", chunk('"x_vendor":{"score":1.0},')],
    ["a choice field", chunk("", '"x_score":2.50,')],
  ])("Should serve %s of a stream as spelled or not record it (was: served as JavaScript spells it)", async (_, first) => {
    const sse = [first, chunk("", "", "", '"stop"'), "[DONE]"];
    const out = await missAndHit({ sse }, true);
    const spelling = /1\.0\b|2\.50/.exec(first)?.[0];
    expect(out.hit === null || out.hit.includes(`${spelling}`)).toBe(true);
  });

  it("Should still record a stream whose only such number is in a field a hit renews (usage)", async () => {
    const sse = [chunk(""), chunk('"usage":{"prompt_tokens":5,"completion_tokens":2,"cost":0.00012340},', "", "", '"stop"'), "[DONE]"];
    const out = await missAndHit({ sse }, true);
    expect(out.hit && messageOf(out.hit)).toStrictEqual({ role: "assistant", content: "Refunded." });
  });

  it("Should still record an answer whose only such number is in a field a hit renews (usage)", async () => {
    const out = await missAndHit({ text: answer("") });
    expect(out.hit && messageOf(out.hit)).toStrictEqual(messageOf(out.miss));
  });
});
