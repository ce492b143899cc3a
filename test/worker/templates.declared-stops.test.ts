import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";
import { ask, orderOf, scriptModel } from "./templates-views-hunt.support";

/**
 * A declared answer confirmed by two bindings is rendered with a third's values: where the model stops depends on
 * them (as for learned templates: test/worker/templates-views-hunt.cut.test.ts). A longer value under the same
 * token limit is cut by the model, and a value that holds a stop sequence of the request stops it inside.
 */

afterEach(() => vi.restoreAllMocks());

const full = (o: string, e: string) => `Refunding order ${o} for ${e}. The money is back on your card within five days.`;
type Body = Record<string, unknown>;

/** The desk's model reads its token limit as characters: its answer cut at `max_tokens`, or before the first `stop` it holds. */
function desk(_api: unknown, body: Body) {
  const { order_id, email } = orderOf(body);
  const text = full(order_id, email);
  const limit = Number(body.max_tokens);
  const at = Math.min(...((body.stop as string[] | undefined) ?? []).map((s) => (text.includes(s) ? text.indexOf(s) : Number.POSITIVE_INFINITY)));
  const out = text.slice(0, Math.min(at, limit));
  return {
    id: "chatcmpl-x",
    object: "chat.completion",
    created: 1,
    model: body.model,
    choices: [{ index: 0, message: { role: "assistant", content: out }, finish_reason: out.length === limit && at > limit ? "length" : "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: out.length, total_tokens: 10 + out.length },
  };
}

async function send(key: string, model: string, order: string, email: string, limit: number, stop: string[] = [], headers: Record<string, string> = {}) {
  const body = { model, max_tokens: limit, ...(stop.length > 0 ? { stop } : {}), messages: [{ role: "user", content: ask(order, email) }] };
  const res = await exports.default.fetch(
    new Request("http://mm.test/v1/chat/completions", {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "muscle-mem-bindings": JSON.stringify({ order_id: order, email }),
        ...headers,
      },
      body: JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return {
    status: res.status,
    cache: res.headers.get("muscle-mem-cache"),
    template: res.headers.get("muscle-mem-template"),
    miss: res.headers.get("muscle-mem-template-miss"),
    content: res.status === 200 ? (JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content : text,
  };
}

/** Two bindings answered alike, each waited on until its own repeat is served (its evidence written). */
async function confirmed(limit: number, stop: string[] = []) {
  const key = newKey();
  const model = uniqueModel("declared-stops");
  for (const [order, email] of [
    ["A-1001", "ada@example.com"],
    ["B-2002", "bob@example.org"],
  ] as const) {
    expect((await send(key, model, order, email, limit, stop)).cache).toBe("miss");
    await eventually(async () => (await send(key, model, order, email, limit, stop, { "cache-control": "only-if-cached" })).status === 200);
  }
  return { key, model };
}

describe("a declared answer and where the model stops", () => {
  it("Should not serve a declared answer to values that might not fit the token limit: the model cuts a longer one", async () => {
    const upstream = scriptModel(desk);
    const { key, model } = await confirmed(100);
    const long = await send(key, model, "D-4004", "danielverylongname@example.io", 100);
    expect(long).toMatchObject({ cache: "miss", content: full("D-4004", "danielverylongname@example.io").slice(0, 100) });
    expect(long.miss).toMatch(/^declared answer not served for these values: the answer might not fit the request's token limit \(100;/);
    expect(upstream.asked()).toBe(3);
  });

  it("Should not serve a declared answer whose new values hold a stop sequence of the request, and serve one whose values do not", async () => {
    const upstream = scriptModel(desk);
    const { key, model } = await confirmed(1024, ["404"]);
    expect(await send(key, model, "E-5005", "eve@example.io", 1024, ["404"])).toMatchObject({
      cache: "hit",
      template: "declared",
      content: full("E-5005", "eve@example.io"),
    });
    const stopped = await send(key, model, "D-4040", "dan@example.io", 1024, ["404"]);
    expect(stopped).toMatchObject({ cache: "miss", content: "Refunding order D-" });
    expect(stopped.miss).toMatch(/stop sequence "404"/);
    expect(upstream.asked()).toBe(3);
  });
});
