import { describe, expect, it } from "vitest";
import { api, newKey, importFor } from "./api-helpers";
import { gemini } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { postMessages } from "./messages.support";
import { responses } from "./responses.support";

/**
 * On chat, a live message carrying an envelope key (muscle-mem:…) was keyed without it and shared the
 * answer of the message without it (66e5d3e). On these routes the stored envelope keys are muscle-mem:response
 * and muscle-mem:delta on an Anthropic message, muscle-mem:response on a Responses item, muscle-mem:candidate
 * on a Gemini content: a live request that carries one must not be served the answer recorded without it.
 */

const ndjson = { "content-type": "application/x-ndjson" };
const cached = { "cache-control": "only-if-cached" };

async function imported(key: string, line: unknown): Promise<void> {
  expect((await importFor(key, { body: JSON.stringify(line), headers: ndjson })).status).toBe(200);
}

describe("Messages, Responses and Gemini: a live request whose message carries an envelope key", () => {
  it("Should not serve an Anthropic request whose assistant message carries muscle-mem:response or muscle-mem:delta", async () => {
    const key = newKey();
    const model = uniqueModel("reserved-ant");
    const messages = [
      { role: "user", content: "Refund order A-1." },
      { role: "assistant", content: [{ type: "text", text: "Done." }] },
      { role: "user", content: "Thanks." },
      { role: "assistant", content: [{ type: "text", text: "You are welcome." }] },
    ];
    await imported(key, { model, params: { "muscle-mem:api": "anthropic", max_tokens: 64 }, messages });
    const ask = (m: unknown[]) => postMessages({ model, max_tokens: 64, messages: m }, { key, headers: cached });
    expect((await ask(messages.slice(0, 3))).status).toBe(200);
    for (const field of ["muscle-mem:response", "muscle-mem:delta"]) {
      const res = await ask([messages[0], { ...messages[1], [field]: { usage: {} } }, messages[2]]);
      expect(res.headers.get("muscle-mem-cache"), field).not.toBe("hit");
    }
  });

  it("Should not serve a Responses request whose assistant item carries muscle-mem:response", async () => {
    const key = newKey();
    const model = uniqueModel("reserved-resp");
    const input = [
      { type: "message", role: "user", content: "Refund order A-1." },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done.", annotations: [] }] },
      { type: "message", role: "user", content: "Thanks." },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "You are welcome.", annotations: [] }] },
    ];
    await imported(key, { model, params: { "muscle-mem:api": "openai-responses" }, input });
    const ask = (items: unknown[]) => responses({ model, input: items }, { key, headers: cached });
    expect((await ask(input.slice(0, 3))).status).toBe(200);
    const res = await ask([input[0], { ...input[1], "muscle-mem:response": { service_tier: "x" } }, input[2]]);
    expect(res.headers.get("muscle-mem-cache")).not.toBe("hit");
  });

  it("Should not serve a Gemini request whose model content carries muscle-mem:candidate", async () => {
    const key = newKey();
    const model = uniqueModel("reserved-gem");
    const contents = [
      { role: "user", parts: [{ text: "Refund order A-1." }] },
      { role: "model", parts: [{ text: "Done." }] },
      { role: "user", parts: [{ text: "Thanks." }] },
      { role: "model", parts: [{ text: "You are welcome." }] },
    ];
    await imported(key, { model, params: { "muscle-mem:api": "gemini" }, contents });
    const ask = (c: unknown[]) => gemini(model, { contents: c }, { key, headers: cached });
    expect((await ask(contents.slice(0, 3))).status).toBe(200);
    const res = await ask([contents[0], { ...contents[1], "muscle-mem:candidate": { finishMessage: "x" } }, contents[2]]);
    expect(res.headers.get("muscle-mem-cache")).not.toBe("hit");
  });
});
