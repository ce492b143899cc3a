import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { forgetAccepted, keyClock } from "../../src/engine/key-freshness";
import { api, newKey } from "./api-helpers";
import { eventually, later, recorded, uniqueModel } from "./helpers";
import { type ExplainedRow, explained, sendOn } from "./explain-hunt.support";

/**
 * Why-it-missed hunt, `unconfirmed` (docs/api.md "Why it missed"): every message matched, and the
 * explanation says whether any answer is recorded there (`answers`). Failed before its fix: a request
 * that stops where recorded conversations go on, or ends with a recorded answer, was `unconfirmed` with
 * nothing to tell it from answers the serving policy declined (the docs said answers were recorded there).
 */

afterEach(() => {
  keyClock.now = () => Date.now();
  forgetAccepted();
});

describe("why it missed: every message matched", () => {
  it("Should count no recorded answer for a request that stops where recorded conversations go on, or ends with a recorded answer", async () => {
    const key = newKey();
    const model = uniqueModel("why-unconfirmed");
    const messages = [
      { role: "system", content: "You are the refund desk." },
      { role: "user", content: "Refund order A-1 please" },
    ];
    const { text } = await sendOn("chat", model, { messages }, key, `why-unc-1-${model}`);
    const answer = (JSON.parse(text) as { choices: Array<{ message: unknown }> }).choices[0].message;
    await recorded({ model, messages }, { key });

    const cases: Array<[string, unknown[], number]> = [
      ["prefix", messages.slice(0, 1), 1],
      ["answer-last", [...messages, answer], 3],
    ];
    for (const [name, path, depth] of cases) {
      const id = `why-unc-${name}-${model}`;
      // Past HOT_CACHE_TTL_MS (200 ms in tests): the answer node this isolate just recorded is no longer believed
      // childless, so the request is looked up (a fast miss is the explain-hunt.fast file's), whatever the machine's speed.
      const { res } = await later(1_000, () => sendOn("chat", model, { messages: path }, key, id));
      expect(res.headers.get("muscle-mem-miss"), name).toBe(`unconfirmed; depth=${depth}`);
      const row = await explained(id, key);
      expect(row.explanation, name).toMatchObject({ kind: "unconfirmed", depth, messages: depth, answers: 0, fast_miss: false });
    }
  });

  it("Should count the recorded answer a stale credential was not served, and say why in the row's reason", async () => {
    let now = 7_000_000_000;
    keyClock.now = () => now;
    const key = `sk-why-${crypto.randomUUID()}`;
    const model = uniqueModel("why-stale-key");
    const body = { messages: [{ role: "user", content: "Still mine?" }] };
    await sendOn("chat", model, body, key, `why-key-1-${model}`);
    await recorded({ model, ...body }, { key });
    await (await fetch(`${env.UPSTREAM_TEST_URL}/__revoke`, { method: "POST", body: key })).arrayBuffer();
    now += 900_000;
    const id = `why-key-2-${model}`;
    const { res } = await sendOn("chat", model, body, key, id);
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(res.headers.get("muscle-mem-miss")).toBe("unconfirmed; depth=1");
    // The revoked key reads nothing through the API any more: the operator does.
    let row: ExplainedRow | null = null;
    await eventually(async () => {
      const r = await api(`/requests/${id}`);
      if (r.status !== 200) {
        await r.arrayBuffer();
        return false;
      }
      row = (await r.json<{ data: ExplainedRow }>()).data;
      return true;
    });
    expect(row).toMatchObject({ outcome: "miss", reason: "key_unverified", explanation: { kind: "unconfirmed", depth: 1, answers: 1 } });
  });
});
