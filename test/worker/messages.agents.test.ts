import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import claudeCode from "../fixtures/agents/claude-code.request.json";
import { generations, uniqueModel } from "./helpers";
import { eventually } from "./helpers";
import { postMessages } from "./messages.support";

type Body = Record<string, unknown> & { messages: Array<Record<string, unknown>> };

/** Claude Code's request as the fixture holds it (its headers, `?beta=true`), for `model`, with `patch` over the body. */
function claudeCodeRequest(model: string, key: string, patch: Record<string, unknown> = {}, headers: Record<string, string> = {}): Request {
  const body = { ...(claudeCode.body as Body), model, ...patch };
  return new Request(`http://mm.test/v1/messages${claudeCode._query}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key, ...claudeCode._headers, ...headers },
    body: JSON.stringify(body),
  });
}

async function send(
  model: string,
  key: string,
  patch: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ res: Response; text: string }> {
  const res = await exports.default.fetch(claudeCodeRequest(model, key, patch, headers));
  return { res, text: await res.text() };
}

/** Waits until the Worker serves this request from the cache. */
async function recorded(model: string, key: string, patch: Record<string, unknown>): Promise<void> {
  await eventually(async () => (await send(model, key, patch, { "cache-control": "only-if-cached" })).res.status === 200);
}

describe("Claude Code's request shape (test/fixtures/agents/claude-code.request.json)", () => {
  for (const [mode, off] of [
    ["thinking off", { thinking: { type: "disabled" } }],
    ["adaptive thinking, as captured", {}],
  ] as const) {
    it(`Should key a mid-conversation role: system message as a node: a repeated run hits, streamed, with no second generation (${mode})`, async () => {
      const model = uniqueModel("cc");
      const key = `sk-ant-cc-${crypto.randomUUID().slice(0, 8)}`;
      const first = await send(model, key, off);
      expect(first.res.status).toBe(200);
      expect(first.res.headers.get("muscle-mem-cache")).toBe("miss");
      await recorded(model, key, off);
      const again = await send(model, key, off);
      expect(again.res.headers.get("muscle-mem-cache")).toBe("hit");
      expect(again.text).toContain("event: message_stop");
      expect(await generations(model)).toBe(1);
    });
  }

  it("Should never key a system message like a user message with the same text", async () => {
    const model = uniqueModel("cc");
    const key = `sk-ant-cc-${crypto.randomUUID().slice(0, 8)}`;
    const off = { thinking: { type: "disabled" }, stream: false };
    const messages = (claudeCode.body as Body).messages;
    expect((await send(model, key, { ...off, messages })).res.headers.get("muscle-mem-cache")).toBe("miss");
    await recorded(model, key, off);
    const asUser = messages.map((m) => (m.role === "system" ? { ...m, role: "user" } : m));
    const other = await send(model, key, { ...off, messages: asUser }, { "cache-control": "only-if-cached" });
    expect(other.res.status).toBe(504);
  });

  it("Should pass a role it does not know to the model (bypass), never answer it with a 400 of its own", async () => {
    const model = uniqueModel("echo");
    const res = await postMessages({
      model,
      max_tokens: 16,
      messages: [
        { role: "user", content: "hi" },
        { role: "narrator", content: "later" },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    await res.arrayBuffer();
    expect(await generations(model)).toBe(1);
  });
});
