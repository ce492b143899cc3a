import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest as chatBody } from "../../src/core/messages";
import { tenantOf } from "../../src/core/hash";
import { eventually, gatedUpstream, generations, uniqueModel } from "./helpers";
import { callWorker, chatRequest, nodesContaining, storedFor } from "./faults.support";
import { followersWaiting } from "./settled";

const ask = (model: string, text: string) => ({ model, messages: [{ role: "user", content: text }] });

interface Completion {
  choices: Array<{ message: { content: string | null; tool_calls?: Array<{ function: unknown }> } }>;
}

/** What an answer says, without the ids that differ per response. */
const said = (c: Completion) => JSON.stringify([c.choices[0].message.content, c.choices[0].message.tool_calls?.map((t) => t.function)]);

afterEach(async () => {
  await env.DB.exec("DROP TRIGGER IF EXISTS fault_nodes_insert");
});

describe("D1 failing to record", () => {
  it("Should answer from the model, store nothing, and let the next identical miss lead again", async () => {
    const marker = `d1-fault-${crypto.randomUUID().slice(0, 8)}`;
    await env.DB.exec(
      `CREATE TRIGGER fault_nodes_insert BEFORE INSERT ON nodes WHEN instr(NEW.message, '${marker}') > 0 BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END`,
    );
    const model = uniqueModel("echo");
    const first = await callWorker(chatRequest(ask(model, marker)));
    expect(first.res.status).toBe(200);
    expect(((await first.res.json()) as Completion).choices[0].message.content).toBe(`echo: ${marker}`);
    await first.settled();
    expect(await storedFor(model)).toEqual({ trees: 0, nodes: 0 });
    expect(await nodesContaining(marker)).toBe(0);

    const second = await callWorker(chatRequest(ask(model, marker)));
    expect(((await second.res.json()) as Completion).choices[0].message.content).toBe(`echo: ${marker}`);
    // The failed recording released its single flight: the next request leads (miss), it does not wait and step aside.
    expect(second.res.headers.get("muscle-mem-cache")).toBe("miss");
    await second.settled();
    expect(await generations(model)).toBe(2);
    expect(await storedFor(model)).toEqual({ trees: 0, nodes: 0 });
  });
});

describe("D1 too slow to look up", () => {
  // Seeding 200,000 rows takes seconds on a busy machine: more than the default 5 s test timeout.
  it("Should step aside (bypass) when the lookup exceeds LOOKUP_TIMEOUT_MS, answer from the model and store nothing", { timeout: 30_000 }, async () => {
    const model = uniqueModel("echo");
    const text = `slow-d1-${crypto.randomUUID().slice(0, 8)}`;
    const body = ask(model, text);
    const keyed = keyRequest(chatBody.parse(body), tenantOf("Bearer sk-faults"), "default");
    if (!keyed.ok) throw new Error("unkeyable");
    // 200,000 non-answer children of h_n: the lookup's indexed scan of them takes far longer than 1 ms.
    await env.DB.prepare(
      "INSERT INTO nodes (hash, parent, tree_id, depth, role, message) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) SELECT ?1 || i, ?2, 'fault-bulk', 1, 'user', '{}' FROM n",
    )
      .bind(`bulk-${text}-`, keyed.key.key)
      .run();
    try {
      const call = await callWorker(chatRequest(body), { LOOKUP_TIMEOUT_MS: "1" });
      expect(call.res.status).toBe(200);
      expect(call.res.headers.get("muscle-mem-cache")).toBe("bypass");
      expect(((await call.res.json()) as Completion).choices[0].message.content).toBe(`echo: ${text}`);
      await call.settled();
      expect(await storedFor(model)).toEqual({ trees: 0, nodes: 0 });
    } finally {
      await env.DB.prepare("DELETE FROM nodes WHERE tree_id = 'fault-bulk'").run();
    }
  });
});

describe("the Durable Object failing", () => {
  it("Should answer a follower from the model when the object is reset mid-flight, and serve the next request from a fresh object", {
    timeout: 15_000,
  }, async () => {
    const model = uniqueModel("echo");
    const body = ask(model, "reset me");
    // An object that stops answering holds a follower at most SINGLE_FLIGHT_WAIT_MS.
    const vars = { SINGLE_FLIGHT_WAIT_MS: "3000" };
    // The leader's generation is held at a gate until the follower waits on its flight and the objects are reset.
    const upstream = gatedUpstream();
    const [a, b] = await upstream.during(async () => {
      const leader = callWorker(chatRequest(body), vars);
      await eventually(() => upstream.asked() === 1);
      const waiting = await followersWaiting();
      const follower = callWorker(chatRequest(body), vars);
      // The follower's claim has reached the object: reset every object (its in-flight RPC now fails), then let the model answer.
      await eventually(async () => (await followersWaiting()) === waiting + 1);
      await abortAllDurableObjects();
      upstream.open();
      return Promise.all([leader, follower]);
    });
    const answers: string[] = [];
    for (const call of [a, b]) {
      expect(call.res.status).toBe(200);
      answers.push(said((await call.res.json()) as Completion));
    }
    expect(answers[1]).toBe(answers[0]);
    expect(a.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(b.res.headers.get("muscle-mem-cache")).toBe("bypass");
    await Promise.all([a.settled(), b.settled()]);
    const next = await callWorker(chatRequest(body), vars);
    expect(next.res.status).toBe(200);
    expect(said((await next.res.json()) as Completion)).toBe(answers[0]);
    await next.settled();
    const dupes = await env.DB.prepare("SELECT hash FROM nodes GROUP BY hash HAVING count(*) > 1").all();
    expect(dupes.results).toEqual([]);
  });

  it("Should step aside when a follower's wait for its leader exceeds SINGLE_FLIGHT_WAIT_MS", async () => {
    const model = uniqueModel("echo");
    const body = ask(model, "wait for me");
    const vars = { SINGLE_FLIGHT_WAIT_MS: "100" };
    // The leader's generation is held until the follower has given up waiting for it and asked the model itself.
    const upstream = gatedUpstream(1);
    const { follower, followerText, first } = await upstream.during(async () => {
      const leader = callWorker(chatRequest(body), vars);
      await eventually(() => upstream.asked() === 1);
      const follower = await callWorker(chatRequest(body), vars);
      const followerText = said((await follower.res.json()) as Completion);
      upstream.open();
      return { follower, followerText, first: await leader };
    });
    expect(follower.res.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(first.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(said((await first.res.json()) as Completion)).toBe(followerText);
    await Promise.all([first.settled(), follower.settled()]);
    expect(await generations(model)).toBe(2);
  });
});
