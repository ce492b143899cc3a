import { describe, expect, it } from "vitest";
import { api, newKey, ok, type Tree, importFor } from "./api-helpers";
import { chat, uniqueModel } from "./helpers";
import { settled } from "./settled";
import { completion, withUpstream } from "./upstream-stub";

/**
 * What an answer keeps outside its hash (chat's muscle-mem:choice / response, Gemini's
 * muscle-mem:candidate, …) is stored in the answer's row. The key bounds a message by its hash
 * form (MAX_CACHEABLE_MESSAGE_BYTES, 900,000 in wrangler.toml: D1 rejects a row over 1,000,000
 * bytes), so the stored form must be bounded too: an import is a 400, a miss records nothing.
 */

const LIMIT = 900_000;
const pad = "x".repeat(LIMIT + 10);
const ndjson = { "content-type": "application/x-ndjson" };

async function noTrees(key: string): Promise<void> {
  const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
  expect(page.data).toHaveLength(0);
}

describe("a stored answer is bounded with its envelope", () => {
  it("Should reject with 400 a chat import whose answer's envelope makes its stored form too large, storing nothing", async () => {
    const key = newKey();
    const line = {
      model: uniqueModel("stored-size"),
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello", "muscle-mem:response": { pad } },
      ],
    };
    const res = await importFor(key, { body: JSON.stringify(line), headers: ndjson });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    await noTrees(key);
  });

  it("Should reject with 400 a Gemini import whose answer's candidate metadata makes its stored form too large", async () => {
    const key = newKey();
    const line = {
      model: uniqueModel("stored-size-g"),
      params: { "muscle-mem:api": "gemini" },
      contents: [
        { role: "user", parts: [{ text: "hi" }] },
        { role: "model", parts: [{ text: "hello" }], "muscle-mem:candidate": { finishMessage: pad } },
      ],
    };
    const res = await importFor(key, { body: JSON.stringify(line), headers: ndjson });
    expect(res.status).toBe(400);
    await noTrees(key);
  });

  it("Should relay and not record a chat answer whose response fields make its stored form too large (vLLM prompt_logprobs)", async () => {
    const model = uniqueModel("stored-size-live");
    const body = { model, messages: [{ role: "user", content: "hi" }] };
    const upstream = {
      ...(completion({ role: "assistant", content: "hello" }) as Record<string, unknown>),
      prompt_logprobs: [null, { "1": { logprob: -1, rank: 1, decoded_token: pad } }],
    };
    // settled: the decision to record nothing has been made (and kept) before only-if-cached asks.
    const res = await settled(async () => {
      const r = await withUpstream({ json: upstream }, () => chat(body));
      return { status: r.status, cache: r.headers.get("muscle-mem-cache"), json: (await r.json()) as { prompt_logprobs: unknown[] } };
    });
    expect(res.status).toBe(200);
    expect(res.cache).toBe("miss");
    expect(res.json.prompt_logprobs).toHaveLength(2);
    const again = await chat(body, { headers: { "cache-control": "only-if-cached" } });
    await again.arrayBuffer();
    expect(again.status).toBe(504);
  });
});
