import { describe, expect, it } from "vitest";
import { chat, generations, uniqueModel } from "./helpers";

interface Completion {
  choices: Array<{ message: { content: string | null; tool_calls?: Array<{ function: unknown }> } }>;
}

/** What an answer says, without the ids that differ per response. */
const said = (c: Completion) => JSON.stringify([c.choices[0].message.content, c.choices[0].message.tool_calls?.map((t) => t.function) ?? null]);

describe("single flight under load", () => {
  it("Should make one upstream generation for 50 concurrent identical misses to a slow model, and answer all 50 correctly", { timeout: 30_000 }, async () => {
    // A model slower than LOOKUP_TIMEOUT_MS (1.5 s): followers must wait for the leader, not step aside.
    const model = uniqueModel("slow-2000-x");
    const body = { model, messages: [{ role: "user", content: "What is the refund policy?" }] };
    const responses = await Promise.all(Array.from({ length: 50 }, () => chat(body, { key: "sk-load" })));
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
