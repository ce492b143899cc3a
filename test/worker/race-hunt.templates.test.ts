import { env } from "cloudflare:workers";
import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api } from "./api-helpers";
import { chat, eventually, gatedUpstream, generations, uniqueModel } from "./helpers";
import { followersWaiting, learningRan, settled } from "./settled";
import { scriptChatUpstream, type ChatScriptBody } from "./upstream-stub";

/**
 * Template and declared-evidence rows whose JSON is damaged in D1 (written here with the D1 binding):
 * skipped with a reason where skipping cannot serve anything wrong (the templates API, learning), and a
 * miss where it could (a request a damaged template or evidence row might have refused). Never a 500.
 */

/** The refund desk: refunds an even amount and says so. */
function desk(body: ChatScriptBody): string {
  const [, name, amount, order] = /I'm (\S+ \S+), please refund (\d+) on order (\S+)\./.exec(body.messages[1].content) ?? [];
  return `Refunded ${amount} on order ${order} for ${name}.`;
}

let upstream = { asked: 0 };
beforeEach(() => {
  upstream = scriptChatUpstream(desk);
});
afterEach(() => vi.restoreAllMocks());

async function ask(
  model: string,
  name: string,
  amount: number,
  order: string,
): Promise<{ status: number; cache: string | null; template: string | null; content: string; miss?: string }> {
  return settled(async () => {
    const res = await chat(
      {
        model,
        messages: [
          { role: "system", content: "You are the refund desk." },
          { role: "user", content: `I'm ${name}, please refund ${amount} on order ${order}.` },
        ],
      },
      { key: "sk-race-templates", headers: { "muscle-mem-bindings": JSON.stringify({ name, order_id: order }) } },
    );
    const status = res.status;
    const miss = res.headers.get("muscle-mem-template-miss");
    const body = (await res.json()) as OpenAI.ChatCompletion;
    return {
      status,
      cache: res.headers.get("muscle-mem-cache"),
      template: res.headers.get("muscle-mem-template"),
      content: body.choices?.[0]?.message.content ?? "",
      ...(miss === null ? {} : { miss }),
    };
  });
}

/** The tree of `model` (its frame names it). */
async function treeOf(model: string): Promise<string> {
  const row = await env.DB.prepare("SELECT id FROM trees WHERE frame LIKE ?1").bind(`%"model":"${model}"%`).first<{ id: string }>();
  if (!row) throw new Error(`no tree for ${model}`);
  return row.id;
}

/** Records three refunds (three bindings) and learns from them: the tree then has a confirmed learned template. */
async function learnedTree(model: string): Promise<{ treeId: string; template: { id: string; lookup_key: string; anchor_depth: number; bindings: number } }> {
  for (const [name, amount, order] of [
    ["Ada Lovelace", 100, "A-1001"],
    ["Bob Stone", 300, "A-2002"],
    ["Dan Roe", 200, "A-4004"],
  ] as const) {
    expect((await ask(model, name, amount, order)).cache).toBe("miss");
    await learningRan();
  }
  const treeId = await treeOf(model);
  const template = await env.DB.prepare("SELECT id, lookup_key, anchor_depth, bindings FROM templates WHERE tree_id = ?1 AND anchor_depth >= 0 AND refuted = 0")
    .bind(treeId)
    .first<{ id: string; lookup_key: string; anchor_depth: number; bindings: number }>();
  if (!template) throw new Error("no learned template");
  return { treeId, template };
}

/** A template row beside `like` (same tree, lookup key and anchor) whose pattern and state are damaged. */
async function damagedTemplate(treeId: string, like: { lookup_key: string; anchor_depth: number }, pattern: string, state: string): Promise<string> {
  const id = `damaged-${crypto.randomUUID()}`;
  await env.DB.prepare(
    "INSERT INTO templates (id, tree_id, lookup_key, anchor_depth, pattern, state, bindings, refuted, hits, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 3, 0, 0, ?7, ?7)",
  )
    .bind(id, treeId, like.lookup_key, like.anchor_depth, pattern, state, Date.now())
    .run();
  return id;
}

const damages: Array<[what: string, pattern: string, state: string]> = [
  ["not JSON", '{"anchorDepth":1,"suffix":[', "{"],
  ["JSON null", "null", "null"],
  ["an object of the wrong shape", '{"anchorDepth":1}', '{"slots":{}}'],
];

describe("a damaged learned template", () => {
  for (const [what, pattern, state] of damages) {
    it(`Should miss (never serve, never a 500) beside a damaged template (${what}), list the tree's other templates, and go on learning`, async () => {
      const model = uniqueModel("race-tpl");
      const { treeId, template } = await learnedTree(model);
      expect(await ask(model, "Eve Park", 250, "A-5005")).toEqual({
        status: 200,
        cache: "hit",
        template: template.id,
        content: "Refunded 250 on order A-5005 for Eve Park.",
      });
      const damaged = await damagedTemplate(treeId, template, pattern, state);
      // The damaged template might have rendered another answer: in doubt, the request goes to the model.
      expect(await ask(model, "Fay Wong", 260, "A-6006")).toEqual({
        status: 200,
        cache: "miss",
        template: null,
        content: "Refunded 260 on order A-6006 for Fay Wong.",
        miss: "template store not readable in time: the request went to the model",
      });
      await learningRan();
      // Learning went on beside it: the model's answer for 260 confirmed the good template (a fourth binding).
      const after = await env.DB.prepare("SELECT bindings FROM templates WHERE id = ?1").bind(template.id).first<{ bindings: number }>();
      expect(after?.bindings).toBe(template.bindings + 1);
      // The templates API lists the good one and leaves the damaged one out.
      const res = await api(`/trees/${treeId}/templates`, { headers: { authorization: "Bearer sk-race-templates" } });
      expect(res.status).toBe(200);
      const ids = ((await res.json()) as { data: Array<{ id: string }> }).data.map((t) => t.id);
      expect(ids).toContain(template.id);
      expect(ids).not.toContain(damaged);
      expect(upstream.asked).toBe(4);
    });
  }
});

describe("damaged declared evidence", () => {
  it("Should not serve a declared answer to a new binding when an evidence row at its node is damaged: it may say the model answered otherwise", async () => {
    const control = uniqueModel("race-decl");
    const model = uniqueModel("race-decl");
    for (const m of [control, model]) {
      expect((await ask(m, "Ada Lovelace", 100, "A-1001")).cache).toBe("miss");
      expect((await ask(m, "Bob Stone", 100, "A-2002")).cache).toBe("miss");
    }
    // Two bindings agree: the declared answer now serves a third (the control shows it).
    expect(await ask(control, "Cyd Moss", 100, "A-3003")).toEqual({
      status: 200,
      cache: "hit",
      template: "declared",
      content: "Refunded 100 on order A-3003 for Cyd Moss.",
    });
    const treeId = await treeOf(model);
    const row = await env.DB.prepare("SELECT lookup_key FROM templates WHERE tree_id = ?1 AND anchor_depth = -1").bind(treeId).first<{ lookup_key: string }>();
    if (!row) throw new Error("no declared evidence");
    for (const [pattern, state] of [
      ['{"declared":', '{"binding":"b"}'],
      ["null", "null"],
    ]) {
      await env.DB.prepare(
        "INSERT INTO templates (id, tree_id, lookup_key, anchor_depth, pattern, state, bindings, refuted, hits, created_at, updated_at) VALUES (?1, ?2, ?3, -1, ?4, ?5, 1, 0, 0, 1, 1)",
      )
        .bind(`damaged-${crypto.randomUUID()}`, treeId, row.lookup_key, pattern, state)
        .run();
    }
    const served = await ask(model, "Cyd Moss", 100, "A-3003");
    expect(served).toMatchObject({
      status: 200,
      cache: "miss",
      content: "Refunded 100 on order A-3003 for Cyd Moss.",
      miss: "declared answer: damaged evidence at this node",
    });
    // The binding the node was recorded with is still an exact repeat: served.
    expect(await ask(model, "Ada Lovelace", 100, "A-1001")).toMatchObject({
      status: 200,
      cache: "hit",
      content: "Refunded 100 on order A-1001 for Ada Lovelace.",
    });
  });
});

describe("declared requests with different values at once", () => {
  it("Should give each binding its own answer when they share one declared key and one flight: the leader's answer is not yet confirmed for the others", async () => {
    // The scripted test upstream's echo model (its answer holds the values), behind a gate: no stub here.
    vi.restoreAllMocks();
    const model = uniqueModel("echo-race-decl");
    const people = [
      ["Ada Lovelace", "A-1001"],
      ["Bob Stone", "A-2002"],
      ["Cyd Moss", "A-3003"],
      ["Dan Roe", "A-4004"],
    ] as const;
    const gate = gatedUpstream(1);
    const got = await gate.during(async () => {
      const before = await followersWaiting();
      const leader = ask(model, people[0][0], 100, people[0][1]);
      await eventually(() => gate.asked() === 1);
      const others = people.slice(1).map(([name, order]) => ask(model, name, 100, order));
      // One declared key (the values are placeholders in it): the others wait on the leader's flight.
      await eventually(async () => (await followersWaiting()) === before + 3);
      gate.open();
      return Promise.all([leader, ...others]);
    });
    expect(got.map((g) => g.content)).toEqual(people.map(([name, order]) => `echo: I'm ${name}, please refund 100 on order ${order}.`));
    expect(got.every((g) => g.status === 200 && g.cache === "miss")).toBe(true);
    expect(await generations(model)).toBe(4);
  });
});
