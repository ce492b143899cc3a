import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Counters } from "../../src/engine/counting/isolate-counters";
import { writeTallies } from "../../src/store/tree/tally-batch";

async function hitsOf(prefix: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COALESCE(SUM(hits), 0) AS n FROM nodes WHERE hash LIKE ?1").bind(`${prefix}%`).first<{ n: number }>();
  return row?.n ?? 0;
}

describe("buffered counters", () => {
  it("Should write at most maxRows row updates per flush and keep the rest for the next one", async () => {
    const prefix = `cnt${crypto.randomUUID().slice(0, 6)}`;
    const insert = env.DB.prepare("INSERT INTO nodes (hash, parent, tree_id, depth, role, message) VALUES (?1, 'p', 't', 1, 'assistant', '{}')");
    await env.DB.batch(Array.from({ length: 30 }, (_, i) => insert.bind(`${prefix}-${i}`)));
    const counters = new Counters();
    for (let i = 0; i < 30; i++) counters.hit("t", `${prefix}-${i}`, { promptTokens: 1, completionTokens: 1, latencyMs: 1 });
    expect(counters.pending()).toBe(31);
    await writeTallies(env.DB, counters.drain(10));
    expect(counters.pending()).toBe(21);
    expect(counters.due()).toBe(true);
    expect(await hitsOf(prefix)).toBe(9);
    await writeTallies(env.DB, counters.drain(10));
    await writeTallies(env.DB, counters.drain(10));
    await writeTallies(env.DB, counters.drain(10));
    expect(counters.pending()).toBe(0);
    expect(counters.due()).toBe(false);
    expect(await hitsOf(prefix)).toBe(30);
  });
});
