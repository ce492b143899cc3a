import { describe, expect, it } from "vitest";
import { geminiMissAndHits } from "./gemini-replay.support";
import { sseChunks } from "./gemini.support";
import { chat, uniqueModel } from "./helpers";
import { postMessages } from "./messages.support";
import { responses } from "./responses.support";
import { settled } from "./settled";
import { withUpstream, type StubReply } from "./upstream-stub";

/**
 * Answer fidelity 4, key order: the fields a hit serves as recorded around the message (Chat's response and
 * choice fields, a Responses envelope, Anthropic's message and usage fields, Gemini's candidate metadata) come
 * back with their keys in the model's order. Before, the stored answer was canonical JSON throughout, so a
 * vendor object came back with its keys sorted (`{"zeta":1,"alpha":2}` as `{"alpha":2,"zeta":1}`), which a
 * client that compares or hashes the text sees as another answer.
 */

type Fields = Record<string, unknown>;

/** The text of `path` in a parsed body, its keys in the order the parse kept (the text's). */
const textOf = (body: unknown, path: Array<string | number>): string =>
  JSON.stringify(path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], body));

/** A vendor object whose sorted order is not its order, nested. */
const VENDOR = { zeta: 1, alpha: { y: "1", b: [{ q: 1, c: 2 }] }, mid: null };

async function missAndHit<T>(send: (headers: Record<string, string>) => Promise<Response>, reply: StubReply): Promise<{ miss: string; hit: T | null }> {
  const miss = await settled(() => withUpstream(reply, async () => (await send({})).text()));
  const res = await send({ "cache-control": "only-if-cached" });
  return { miss, hit: res.status === 504 ? null : ((await res.json()) as T) };
}

describe("replay fidelity 4: envelope keys in the model's order", () => {
  it("Should serve Chat response and choice vendor fields in their order (was: sorted)", async () => {
    const key = `sk-fid4-${crypto.randomUUID()}`;
    const body = { model: uniqueModel("fid4"), messages: [{ role: "user", content: "Refund order A-1." }] };
    const completion = {
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "m",
      x_vendor: VENDOR,
      choices: [{ index: 0, message: { role: "assistant", content: "Refunded." }, finish_reason: "stop", x_choice: { zeta: 1, alpha: 2 } }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    };
    const out = await missAndHit<Fields>((headers) => chat(body, { key, headers }), { json: completion });
    expect(out.hit).not.toBeNull();
    expect(textOf(out.hit, ["x_vendor"])).toBe(JSON.stringify(VENDOR));
    expect(textOf(out.hit, ["choices", 0, "x_choice"])).toBe('{"zeta":1,"alpha":2}');
  });

  it("Should serve a Responses envelope's vendor fields in their order (was: sorted)", async () => {
    const key = `sk-fid4-${crypto.randomUUID()}`;
    const response = {
      id: "resp_up",
      object: "response",
      created_at: 1760000000,
      status: "completed",
      model: "stub",
      x_vendor: VENDOR,
      reasoning: { summary: null, effort: "low" },
      output: [
        { id: "msg_up", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "On its way.", annotations: [] }] },
      ],
      usage: { input_tokens: 12, output_tokens: 9, total_tokens: 21, x_cost: { zeta: 1, alpha: 2 } },
    };
    const raw = (stream: boolean) => JSON.stringify({ model: uniqueModel("fid4"), input: "Where is order A-1?", stream });
    const ask = raw(false);
    const out = await missAndHit<Fields>((headers) => responses(ask, { key, headers }), { json: response });
    expect(out.hit).not.toBeNull();
    expect(textOf(out.hit, ["x_vendor"])).toBe(JSON.stringify(VENDOR));
    expect(textOf(out.hit, ["reasoning"])).toBe('{"summary":null,"effort":"low"}');
    expect(textOf(out.hit, ["usage", "x_cost"])).toBe('{"zeta":1,"alpha":2}');
  });

  it("Should serve Anthropic message and usage fields in their order (was: sorted)", async () => {
    const key = `sk-ant-fid4-${crypto.randomUUID()}`;
    const model = `claude-fid4-${crypto.randomUUID().slice(0, 8)}`;
    const body = { model, max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }] };
    const cache = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    const message = {
      id: "msg_up",
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text: "Refunded." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      x_vendor: VENDOR,
      usage: { input_tokens: 5, output_tokens: 7, cache_creation: cache },
    };
    const out = await missAndHit<Fields>((headers) => postMessages(body, { key, headers }), { json: message });
    expect(out.hit).not.toBeNull();
    expect(textOf(out.hit, ["x_vendor"])).toBe(JSON.stringify(VENDOR));
    expect(textOf(out.hit, ["usage", "cache_creation"])).toBe(JSON.stringify(cache));
  });

  it("Should serve Gemini candidate metadata in its order, JSON and streamed (was: citation sources sorted)", async () => {
    const body = { contents: [{ role: "user", parts: [{ text: "Cite it." }] }] };
    const source = { startIndex: 0, endIndex: 12, uri: "https://example.com", license: "mit" };
    const candidate = {
      content: { role: "model", parts: [{ text: "It is cited." }] },
      finishReason: "STOP",
      citationMetadata: { citationSources: [source] },
      index: 0,
    };
    const usage = { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 } };
    const check = (out: { json: string | null; stream: string | null }) => {
      expect(out.json).not.toBeNull();
      expect(textOf(JSON.parse(out.json ?? "null"), ["candidates", 0, "citationMetadata"])).toBe(JSON.stringify({ citationSources: [source] }));
      const chunks = sseChunks<Fields>(out.stream ?? "");
      expect(textOf(chunks.at(-1), ["candidates", 0, "citationMetadata"])).toBe(JSON.stringify({ citationSources: [source] }));
    };
    check(await geminiMissAndHits(body, { json: { candidates: [candidate], ...usage } }, false));
    check(await geminiMissAndHits(body, { sse: [{ candidates: [candidate], ...usage, modelVersion: "stub" }] }, true));
  });
});
