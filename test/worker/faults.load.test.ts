import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { chat, eventually, gatedUpstream, generations, uniqueModel } from "./helpers";
import { followersWaiting } from "./settled";

/** LOOKUP_TIMEOUT_MS of the test Worker (wrangler.toml): how long a lookup may take before the request steps aside. */
const LOOKUP_TIMEOUT_MS = Number((env as unknown as Record<string, string>).LOOKUP_TIMEOUT_MS);

interface Completion {
  choices: Array<{ message: { content: string | null; tool_calls?: Array<{ function: unknown }> } }>;
}

/** What an answer says, without the ids that differ per response. */
const said = (c: Completion) => JSON.stringify([c.choices[0].message.content, c.choices[0].message.tool_calls?.map((t) => t.function) ?? null]);

describe("single flight under load", () => {
  it("Should make one upstream generation for 50 concurrent identical misses whose model answers after LOOKUP_TIMEOUT_MS, and answer all 50 correctly", {
    timeout: 30_000,
  }, async () => {
    const model = uniqueModel("load");
    const body = { model, messages: [{ role: "user", content: "What is the refund policy?" }] };
    // The leader's generation is held until all 49 others wait on its flight (however long they take to arrive),
    // then longer than LOOKUP_TIMEOUT_MS (1.5 s): followers must wait for the leader, not step aside.
    const upstream = gatedUpstream(1);
    const responses = await upstream.during(async () => {
      const before = await followersWaiting();
      const leader = chat(body, { key: "sk-load" });
      await eventually(() => upstream.asked() === 1, 20_000);
      const followers = Array.from({ length: 49 }, () => chat(body, { key: "sk-load" }));
      await eventually(async () => (await followersWaiting()) === before + 49, 20_000);
      // A lower bound, not a race: a slower machine only holds them longer.
      await new Promise((r) => setTimeout(r, LOOKUP_TIMEOUT_MS + 100));
      upstream.open();
      return Promise.all([leader, ...followers]);
    });
    const outcomes = responses.map((r) => r.headers.get("muscle-mem-cache"));
    const texts = await Promise.all(responses.map(async (r) => said((await r.json()) as Completion)));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(new Set(texts).size).toBe(1);
    expect(texts[0]).not.toBe("[null,null]");
    expect(outcomes.filter((o) => o === "miss")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "hit")).toHaveLength(49);
    expect(await generations(model)).toBe(1);
  });
});
