import { describe, expect, it } from "vitest";
import { api, newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { type Api, explained, sendOn } from "./explain-hunt.support";

/**
 * Why-it-missed hunt, bypasses (docs/api.md "Why it missed", GET /api/requests/:id): a request the cache
 * would not key says why to the tenant that sent it, on every API, and to no other tenant. Failed before
 * its fix: the row of an unkeyed bypass had no tenant, so only the admin could read its reason.
 */

const BYPASSES: Array<{ api: Api; body: Record<string, unknown>; reason: string }> = [
  { api: "chat", body: { n: 2, messages: [{ role: "user", content: "hi" }] }, reason: "n > 1" },
  { api: "chat", body: { logprobs: true, messages: [{ role: "user", content: "hi" }] }, reason: "logprobs" },
  { api: "gemini", body: { generationConfig: { candidateCount: 2 }, contents: [{ role: "user", parts: [{ text: "hi" }] }] }, reason: "candidateCount > 1" },
  {
    api: "messages",
    body: { messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x.test/a.png" } }] }] },
    reason: "image content block",
  },
  { api: "responses", body: { top_logprobs: 2, input: "hi" }, reason: "logprobs" },
];

describe("why it missed: bypasses", () => {
  for (const { api: which, body, reason } of BYPASSES)
    it(`Should show a ${which} bypass (${reason}) and its reason to its own tenant, and to no other`, async () => {
      const [key, other] = [newKey(), newKey()];
      const model = uniqueModel(`why-bypass-${which}`);
      const id = `why-bypass-${which}-${model}`;
      const { res } = await sendOn(which, model, body, key, id);
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
      const row = await explained(id, key);
      expect(row).toMatchObject({ outcome: "bypass", tree_id: null, explanation: null });
      expect(row.reason).toBe(reason);
      const stranger = await api(`/requests/${id}`, { token: other });
      expect(stranger.status).toBe(404);
      await stranger.arrayBuffer();
    });
});
