import { describe, expect, it } from "vitest";
import { api, importFor } from "./api-helpers";
import { responses } from "./responses.support";
import { withUpstream } from "./upstream-stub";

/**
 * What a Responses hit serves around its items (src/providers/responses/envelope.ts, muscle-mem:response)
 * and of reasoning items (stored as the model sent them, status included). An import stores any object under
 * muscle-mem:response and any reasoning item; what a hit serves must never contradict the answer it is.
 */

type Fields = Record<string, unknown>;

const key = () => `sk-rv2-resp-${crypto.randomUUID()}`;
const model = () => `gpt-rv2-${crypto.randomUUID().slice(0, 8)}`;
const ndjson = { "content-type": "application/x-ndjson" };
const user = { type: "message", role: "user", content: "Refund order A-1." };
const reasoning = {
  id: "rs_recordingaccount1",
  type: "reasoning",
  summary: [{ type: "summary_text", text: "**Refunding**" }],
  encrypted_content: "gAAAABrecorded==",
};
const message = { type: "message", role: "assistant", content: [{ type: "output_text", text: "Order A-1 is refunded.", annotations: [] }] };

function lineOf(m: string, items: Fields[]): Fields {
  return { model: m, params: { "muscle-mem:api": "openai-responses" }, input: [user, ...items] };
}

async function importLine(k: string, line: Fields): Promise<Response> {
  return importFor(k, { body: JSON.stringify(line), headers: ndjson });
}

describe("a Responses hit and what an import stored", () => {
  for (const status of ["in_progress", "incomplete"]) {
    it(`Should not import an answer whose reasoning item says ${status}, and serve none for it`, async () => {
      const k = key();
      const m = model();
      const res = await importLine(k, lineOf(m, [{ ...reasoning, status }, message]));
      expect(res.status).toBe(400);
      const hit = await responses({ model: m, input: [user] }, { key: k, headers: { "cache-control": "only-if-cached" } });
      expect(hit.status).toBe(504);
    });
  }

  it("Should still import a reasoning item without a status or with status completed", async () => {
    for (const item of [reasoning, { ...reasoning, status: "completed" }, { ...reasoning, status: null }]) {
      const k = key();
      const m = model();
      expect((await importLine(k, lineOf(m, [item, message]))).status).toBe(200);
      const hit = await responses({ model: m, input: [user] }, { key: k });
      expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
      expect(((await hit.json()) as { output: Fields[] }).output[0]).toEqual(item);
    }
  });

  it("Should not record a completed response whose reasoning item says incomplete", async () => {
    const k = key();
    const m = model();
    const body = { model: m, input: [user] };
    const upstream = {
      id: "resp_up",
      object: "response",
      created_at: 1760000000,
      status: "completed",
      model: m,
      output: [
        { ...reasoning, status: "incomplete" },
        { ...message, id: "msg_up", status: "completed" },
      ],
      usage: {
        input_tokens: 5,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 9,
        output_tokens_details: { reasoning_tokens: 4 },
        total_tokens: 14,
      },
    };
    const miss = await withUpstream({ json: upstream }, () => responses(body, { key: k }));
    await miss.arrayBuffer();
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    const again = await responses(body, { key: k, headers: { "cache-control": "only-if-cached" } });
    await again.arrayBuffer();
    expect(again.status).toBe(504);
  });

  it("Should serve usage's reasoning_tokens as a count within the output tokens whatever the import stored", async () => {
    for (const details of [{ reasoning_tokens: "x" }, { reasoning_tokens: 1_000_000 }, { reasoning_tokens: -3 }]) {
      const k = key();
      const m = model();
      const line = {
        ...lineOf(m, [{ ...message, "muscle-mem:response": { usage: { output_tokens_details: details } } }]),
        answer_usage: [{ index: 1, prompt_tokens: 5, completion_tokens: 9 }],
      };
      expect((await importLine(k, line)).status).toBe(200);
      const hit = await responses({ model: m, input: [user] }, { key: k });
      expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
      const usage = ((await hit.json()) as { usage: { output_tokens: number; output_tokens_details: { reasoning_tokens: unknown } } }).usage;
      const served = usage.output_tokens_details.reasoning_tokens;
      expect(typeof served, JSON.stringify(details)).toBe("number");
      expect(served as number).toBeGreaterThanOrEqual(0);
      expect(served as number).toBeLessThanOrEqual(usage.output_tokens);
    }
  });

  it("Should serve the hit's status, error, incomplete_details, output and ids whatever the imported envelope names", async () => {
    const k = key();
    const m = model();
    const around = {
      status: "incomplete",
      error: { code: "server_error", message: "x" },
      incomplete_details: { reason: "max_output_tokens" },
      output: [],
      output_text: "Injected.",
      id: "resp_injected",
      object: "x",
      model: "other",
      created_at: 7,
    };
    expect((await importLine(k, lineOf(m, [{ ...message, "muscle-mem:response": around }]))).status).toBe(200);
    const hit = (await (await responses({ model: m, input: [user] }, { key: k })).json()) as Fields & { output: Fields[] };
    expect(hit).toMatchObject({ status: "completed", error: null, incomplete_details: null, object: "response", model: m });
    expect(hit.id).not.toBe("resp_injected");
    expect(hit.output_text).toBeUndefined();
    expect(hit.output).toHaveLength(1);
    expect(hit.output[0]).toMatchObject({ type: "message", content: [{ text: "Order A-1 is refunded." }] });
  });
});
