import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { forgetAccepted, keyClock } from "../../src/engine/key-freshness";
import { api } from "./api-helpers";
import { gemini, recordedGemini } from "./gemini.support";
import { chatAsSent, uniqueModel } from "./helpers";

/**
 * Revoked keys hunt (KEY_FRESH_MS, docs/reliability.md "Tenancy"): a 2xx from one provider proves nothing about
 * a key meant for another. Each case here failed before its fix.
 */

const FRESH_MS = 900_000;
const geminiBase = (env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL;

afterEach(() => {
  keyClock.now = () => Date.now();
  forgetAccepted();
});

describe("a revoked key is not made fresh by another provider's answer", () => {
  it("Should not serve a revoked Gemini key's hits after the OpenAI upstream answered a chat request that carried it (and never received it)", async () => {
    let now = 5_000_000_000;
    keyClock.now = () => now;
    const key = `k-gemini-${crypto.randomUUID()}`;
    const model = uniqueModel("echo");
    const body = { contents: [{ role: "user", parts: [{ text: "Still mine?" }] }] };
    await (await gemini(model, body, { key })).arrayBuffer();
    await recordedGemini(model, body, { key });
    expect((await gemini(model, body, { key })).headers.get("muscle-mem-cache")).toBe("hit");
    await (await fetch(`${geminiBase}/__revoke`, { method: "POST", body: key })).arrayBuffer();
    now += FRESH_MS;
    // The same key on the chat route: the Worker keeps x-goog-api-key from the OpenAI upstream, which (like a
    // gateway with stored keys, or a model on the operator's own network) answers without reading it.
    const chat = await chatAsSent({ model: uniqueModel("echo"), messages: [{ role: "user", content: "hi" }] }, { "x-goog-api-key": key });
    await chat.arrayBuffer();
    expect(chat.status).toBe(200);
    const again = await gemini(model, body, { key });
    await again.arrayBuffer();
    expect(again.headers.get("muscle-mem-cache")).not.toBe("hit");
    expect(again.status).toBe(401);
  });

  for (const via of ["header", "query"] as const)
    it(`Should not let a revoked Gemini key read its tenant through /api after the OpenAI upstream answered a chat request that carried it (${via})`, async () => {
      let now = 6_000_000_000;
      keyClock.now = () => now;
      const key = `k-gemini-${crypto.randomUUID()}`;
      const model = uniqueModel("echo");
      const body = { contents: [{ role: "user", parts: [{ text: "Still mine?" }] }] };
      await (await gemini(model, body, { key })).arrayBuffer();
      await recordedGemini(model, body, { key });
      await (await fetch(`${geminiBase}/__revoke`, { method: "POST", body: key })).arrayBuffer();
      now += FRESH_MS;
      const ask = { model: uniqueModel("echo"), messages: [{ role: "user", content: "hi" }] };
      const chat =
        via === "header"
          ? await chatAsSent(ask, { "x-goog-api-key": key })
          : await exports.default.fetch(
              new Request(`http://mm.test/v1/chat/completions?key=${key}`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify(ask),
              }),
            );
      await chat.arrayBuffer();
      expect(chat.status).toBe(200);
      // From an isolate that knows nothing of the key (only D1 does), and from this one.
      for (const cold of [true, false]) {
        if (cold) forgetAccepted();
        const trees = await api("/trees", { token: key });
        await trees.arrayBuffer();
        expect(trees.status).toBe(401);
      }
    });
});
