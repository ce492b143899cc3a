import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, importFor } from "./api-helpers";
import { chat, eventually, gatedUpstream, generations, uniqueModel } from "./helpers";
import { followersWaiting, settled } from "./settled";

/**
 * Writes that race a recording in flight (docs/reliability.md, "Under real traffic, hunted"): a prune of the
 * path the recording extends, while the model is still answering. Every wait is on a state (the upstream
 * held at a gate), never a duration.
 */

interface Completion {
  choices: Array<{ message: { content: string | null } }>;
}

const key = "sk-race-store";

async function call(body: unknown): Promise<[string | null, string | null, number]> {
  const res = await chat(body, { key });
  return [res.headers.get("muscle-mem-cache"), ((await res.json()) as Completion).choices[0].message.content, res.status];
}

async function observed(text: string): Promise<number[]> {
  const rows = await env.DB.prepare("SELECT observations FROM nodes WHERE instr(message, ?1) > 0 AND role = 'assistant'")
    .bind(text)
    .all<{ observations: number }>();
  return rows.results.map((r) => r.observations);
}

describe("a prune while a recording that extends the pruned path is in flight", () => {
  it("Should never serve the pruned answer again, and serve the recording that landed after the prune", async () => {
    const model = uniqueModel("echo-prune");
    const first = { model, messages: [{ role: "user", content: "turn one" }] };
    const second = { model, messages: [...first.messages, { role: "assistant", content: "echo: turn one" }, { role: "user", content: "turn two" }] };
    expect(await settled(() => call(first))).toEqual(["miss", "echo: turn one", 200]);
    const root = await env.DB.prepare("SELECT hash FROM nodes WHERE instr(message, 'turn one') > 0 AND role = 'user'").first<{ hash: string }>();
    if (!root) throw new Error("no root");
    const upstream = gatedUpstream(1);
    const during = await settled(() =>
      upstream.during(async () => {
        const pending = call(second);
        await eventually(() => upstream.asked() === 1);
        // The whole subtree goes while turn two is at the model.
        const pruned = await api(`/nodes/${root.hash}`, { method: "DELETE" });
        expect(pruned.status).toBe(200);
        upstream.open();
        return pending;
      }),
    );
    expect(during).toEqual(["miss", "echo: turn two", 200]);
    // Turn two's recording landed after the prune, with its whole path: it is served.
    expect(await settled(() => call(second))).toEqual(["hit", "echo: turn two", 200]);
    // Turn one's answer was pruned: the recording stored it again only as a path node (unobserved), never to serve.
    expect(await settled(() => call(first))).toEqual(["miss", "echo: turn one", 200]);
    expect(await generations(model)).toBe(3);
  });
});

describe("recordings of one key that race and disagree", () => {
  it("Should keep every answer and serve none (unanimous): the node goes back to the model, also for a request that joins at once", async () => {
    const model = uniqueModel("fresh-race");
    const body = { model, messages: [{ role: "user", content: "say something new" }] };
    const upstream = gatedUpstream(1);
    const answers = await settled(() =>
      upstream.during(async () => {
        const before = await followersWaiting();
        const leader = chat({ ...body, stream: true }, { key });
        await eventually(() => upstream.asked() === 1);
        const followers = [call(body), call(body), call(body)];
        await eventually(async () => (await followersWaiting()) === before + 3);
        upstream.open();
        // The leader's client hangs up after one chunk: its followers each generate and record their own answer.
        const reader = ((await leader).body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        await reader.cancel("gone");
        return Promise.all(followers);
      }),
    );
    expect(answers.map((a) => a[0])).toEqual(["miss", "miss", "miss"]);
    expect(new Set(answers.map((a) => a[1])).size).toBe(3);
    for (const [, text] of answers) expect(await observed(String(text))).toEqual([1]);
    // Three answers at one node: never one of them served, whether read from D1 or from single flight's recent answers.
    const next = await settled(() => call(body));
    expect(next[0]).toBe("miss");
    expect(answers.map((a) => a[1])).not.toContain(next[1]);
    const cached = await settled(() => chat(body, { key, headers: { "cache-control": "only-if-cached" } }));
    expect(cached.status).toBe(504);
    expect(await generations(model)).toBe(5);
  });
});

describe("an import that contradicts an answer just recorded", () => {
  it("Should not serve the recorded answer from single flight's recent answers once the import made the node disagree", async () => {
    const model = uniqueModel("echo-import");
    const body = { model, messages: [{ role: "user", content: "what do you say?" }] };
    expect(await settled(() => call(body))).toEqual(["miss", "echo: what do you say?", 200]);
    // Within single flight's recent window (10 s) of that recording, another answer at the same node is imported.
    const line = JSON.stringify({ model, messages: [...body.messages, { role: "assistant", content: "imported otherwise" }] });
    const imported = await importFor(key, { body: line });
    expect(imported.status).toBe(200);
    // Two answers at the node: unanimous serves neither (before 11-28 the writer's recent answer was served, a hit).
    const next = await settled(() => call(body));
    expect(next[0]).toBe("miss");
    expect(await generations(model)).toBe(2);
  });
});
