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

/** The miss's body text and a JSON hit's (null when nothing was recorded). */
async function missAndHit(reply: StubReply): Promise<{ miss: string; hit: string | null }> {
  const key = `sk-fid2-${crypto.randomUUID()}`;
  const body = { model: uniqueModel("fid2"), messages: [{ role: "user", content: "Refund order A-1." }] };
  const miss = await settled(() => withUpstream(reply, async () => (await chat(key, body)).text()));
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
