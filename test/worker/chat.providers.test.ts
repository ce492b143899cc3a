import { describe, expect, it } from "vitest";
import { api, newKey, ok, onlyTree, importFor } from "./api-helpers";
import { chat, recorded, uniqueModel } from "./helpers";
import { withUpstream } from "./upstream-stub";
import { deepseek, groq, openRouter, payloads, reassemble, shapes, vllm, withoutRenewed, type ProviderShape } from "./chat.providers.support";

/**
 * Replay fidelity with OpenAI-compatible upstreams (vLLM, OpenRouter, Groq, DeepSeek, Together): a hit
 * answers with every field the model's response carried, as recorded, but what a hit renews on every
 * response (ids, created, model, system_fingerprint, usage). Compared as the client receives it: the JSON
 * body, or the stream reassembled as the `openai` SDK does, the hit against the miss it was recorded from.
 */

const ask = (model: string) => ({ model, messages: [{ role: "user", content: "Refund order A-1." }] });

type Fields = Record<string, unknown>;

/**
 * A completion as it compares across JSON and streaming: a reassembled stream has no choice `logprobs`,
 * and a message field that is null or an empty list reads as absent (a JSON answer spells them out,
 * a stream leaves them out: the SDK assembles `audio: null`, `tool_calls: []` into no field).
 */
function acrossModes(completion: Fields): Fields {
  const choices = (completion.choices as Fields[]).map(({ logprobs: _logprobs, message, ...c }) => {
    const kept = Object.entries(message as Fields).filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0));
    return { ...c, message: Object.fromEntries(kept) };
  });
  return { ...completion, choices };
}

async function jsonMiss(shape: ProviderShape, body: Fields, key?: string): Promise<Fields> {
  const miss = await withUpstream({ json: shape.json }, () => chat(body, { key }));
  expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
  const json = (await miss.json()) as Fields;
  await recorded(body, { key });
  return json;
}

async function streamMiss(shape: ProviderShape, body: Fields, key?: string): Promise<Fields[]> {
  const miss = await withUpstream({ sse: shape.sse }, () => chat({ ...body, stream: true }, { key }));
  expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
  const chunks = payloads(await miss.text());
  await recorded(body, { key });
  return chunks;
}

async function jsonHit(body: Fields, key?: string): Promise<Fields> {
  const res = await chat(body, { key });
  expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  return (await res.json()) as Fields;
}

async function streamHit(body: Fields, key?: string): Promise<Fields[]> {
  const res = await chat({ ...body, stream: true }, { key });
  expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  return payloads(await res.text());
}

describe("replay fidelity: OpenAI-compatible upstreams' own fields", () => {
  for (const shape of shapes) {
    it(`Should serve a ${shape.name} JSON answer as the model sent it, on a JSON and on a streamed hit`, async () => {
      const body = ask(uniqueModel(`fid-${shape.name}`));
      const miss = await jsonMiss(shape, body);
      expect(withoutRenewed(await jsonHit(body))).toEqual(withoutRenewed(miss));
      expect(acrossModes(withoutRenewed(reassemble(await streamHit(body))))).toEqual(acrossModes(withoutRenewed(miss)));
    });

    it(`Should serve a ${shape.name} stream as the model sent it, on a streamed and on a JSON hit`, async () => {
      const body = ask(uniqueModel(`fid-s-${shape.name}`));
      const chunks = await streamMiss(shape, body);
      const asStreamed = withoutRenewed(reassemble(chunks));
      expect(withoutRenewed(reassemble(await streamHit(body)))).toEqual(asStreamed);
      expect(acrossModes(withoutRenewed(await jsonHit(body)))).toEqual(acrossModes(asStreamed));
    });
  }
});

describe("replay fidelity: where a streamed hit sends them, and what keys them", () => {
  it("Should send a field the stream sent on every chunk on every chunk, one it sent once or changed on the finish chunk, the choice's on the finish chunk", async () => {
    const router = ask(uniqueModel("fid-place-or"));
    await streamMiss(openRouter, router);
    const routerChunks = await streamHit(router);
    expect(routerChunks.map((c) => c.provider)).toEqual(routerChunks.map(() => "OpenAI"));
    const finish = routerChunks[routerChunks.length - 1].choices as Fields[];
    expect(finish[0]).toMatchObject({ finish_reason: "stop", native_finish_reason: "completed" });
    expect(routerChunks.slice(0, -1).every((c) => !("native_finish_reason" in (c.choices as Fields[])[0]))).toBe(true);
    const groqBody = ask(uniqueModel("fid-place-g"));
    await streamMiss(groq, groqBody);
    const groqChunks = await streamHit(groqBody);
    expect(groqChunks.filter((c) => "x_groq" in c)).toEqual([
      expect.objectContaining({ x_groq: { id: "req_01", usage: expect.objectContaining({ queue_time: 0.01 }) as unknown } }),
    ]);
    expect((groqChunks[groqChunks.length - 1].choices as Fields[])[0].finish_reason).toBe("stop");
    expect(groqChunks.map((c) => c.service_tier)).toEqual(groqChunks.map(() => "on_demand"));
  });

  it("Should keep every recorded field through an export and an import into another key", async () => {
    for (const shape of [vllm, groq]) {
      const key = newKey();
      const body = ask(uniqueModel(`fid-x-${shape.name}`));
      const expected = withoutRenewed(reassemble(await streamMiss(shape, body, key)));
      const tree = await onlyTree(key);
      const jsonl = (await (await api(`/trees/${tree.id}/export`, { token: key })).text()).trim();
      const other = newKey();
      await ok(importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }));
      expect(withoutRenewed(reassemble(await streamHit(body, other)))).toEqual(expected);
      expect(withoutRenewed(await jsonHit(body, other))).toEqual(withoutRenewed(await jsonHit(body, key)));
    }
  });

  it("Should key the model's reasoning_content when an agent sends the answer back: echoed as served it walks on from the answer, otherwise it is another path", async () => {
    const body = ask(uniqueModel("fid-echo"));
    await jsonMiss(deepseek, body);
    const served = ((await jsonHit(body)).choices as Array<{ message: Fields }>)[0].message;
    expect(served.reasoning_content).toBe("Order A-1 is eligible.");
    const next = (message: Fields) => ({ ...body, messages: [...body.messages, message, { role: "user", content: "Thanks." }] });
    await withUpstream({ json: deepseek.json }, async () => (await chat(next(served))).arrayBuffer());
    await recorded(next(served));
    const { reasoning_content: _dropped, ...withoutReasoning } = served;
    const res = await chat(next(withoutReasoning), { headers: { "cache-control": "only-if-cached" } });
    expect(res.status).toBe(504);
    const other = await chat(next({ ...served, reasoning_content: "Order A-1 is not eligible." }), { headers: { "cache-control": "only-if-cached" } });
    expect(other.status).toBe(504);
  });
});
