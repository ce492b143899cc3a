import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { gemini, geminiGenerations, recordedGemini } from "./gemini.support";
import { eventually, oneFlight } from "./helpers";
import { settled } from "./settled";

/**
 * What the one flow gives every adapter, shown on Gemini: single flight in the
 * tree's Durable Object, fail-open when D1 cannot record, server-timing phases.
 */
const ask = (text: string) => ({ contents: [{ role: "user", parts: [{ text }] }] });

afterEach(async () => {
  await env.DB.exec("DROP TRIGGER IF EXISTS gemini_fault_nodes_insert");
});

describe("the cached flow, through the Gemini adapter", () => {
  it("Should generate once for identical concurrent misses and serve the others as single-flight followers", async () => {
    const model = `flight-gem-${crypto.randomUUID().slice(0, 8)}`;
    const body = ask("Refund order #A-7.");
    const responses = await oneFlight(3, () => gemini(model, body));
    const outcomes = responses.map((r) => r.headers.get("muscle-mem-cache")).sort();
    expect(outcomes).toEqual(["hit", "hit", "miss"]);
    const followers = responses.filter((r) => r.headers.get("muscle-mem-single-flight") === "follower");
    expect(followers).toHaveLength(2);
    expect(followers[0].headers.get("server-timing")).toMatch(/claim;dur=\d+/);
    const texts = await Promise.all(
      responses.map(async (r) => JSON.stringify(((await r.json()) as { candidates: Array<{ content: unknown }> }).candidates[0].content)),
    );
    expect(new Set(texts).size).toBe(1);
    expect(await geminiGenerations(model)).toBe(1);
  });

  it("Should answer from the model and store nothing when D1 cannot record, then lead again", async () => {
    const marker = `gem-fault-${crypto.randomUUID().slice(0, 8)}`;
    await env.DB.exec(
      `CREATE TRIGGER gemini_fault_nodes_insert BEFORE INSERT ON nodes WHEN instr(NEW.message, '${marker}') > 0 BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END`,
    );
    const model = `echo-gem-${crypto.randomUUID().slice(0, 8)}`;
    // settled: the recording that D1 refused has been tried (and given up) before the store is read.
    const first = await settled(async () => {
      const res = await gemini(model, ask(marker));
      return { status: res.status, cache: res.headers.get("muscle-mem-cache"), text: await res.text() };
    });
    expect(first.status).toBe(200);
    expect(first.cache).toBe("miss");
    expect(first.text).toContain(`echo: ${marker}`);
    expect(await geminiGenerations(model)).toBe(1);
    const stored = await env.DB.prepare("SELECT count(*) AS n FROM nodes WHERE instr(message, ?) > 0").bind(marker).first<{ n: number }>();
    expect(stored?.n).toBe(0);
    const second = await gemini(model, ask(marker));
    expect(second.headers.get("muscle-mem-cache")).toBe("miss");
    await second.arrayBuffer();
    await env.DB.exec("DROP TRIGGER IF EXISTS gemini_fault_nodes_insert");
    await eventually(async () => (await geminiGenerations(model)) === 2);
  });

  it("Should serve a recorded answer after no-cache records another observation", async () => {
    const model = `echo-gem-${crypto.randomUUID().slice(0, 8)}`;
    const body = ask("twice");
    await (await gemini(model, body)).arrayBuffer();
    await recordedGemini(model, body);
    const again = await gemini(model, body, { headers: { "cache-control": "no-cache" } });
    expect(again.headers.get("muscle-mem-cache")).toBe("miss");
    await again.arrayBuffer();
    expect(await geminiGenerations(model)).toBe(2);
    await eventually(async () => {
      const res = await gemini(model, body);
      await res.arrayBuffer();
      return res.headers.get("muscle-mem-cache") === "hit";
    });
  });
});
