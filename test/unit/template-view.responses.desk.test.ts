import { describe, expect, it } from "vitest";
import { canonicalJson, ToolCallIds } from "../../src/core/canonical";
import { childHash } from "../../src/core/hash";
import type { RequestKey } from "../../src/cache/request-key";
import type { Trajectory } from "../../src/cache/templates/induce";
import { learnStep, type Partner } from "../../src/cache/templates/learn-step";
import { learnedLookup, learnedOutcome } from "../../src/cache/templates/learned-answer";
import type { LearnedTemplate } from "../../src/cache/templates/induce";
import { decomposeOnce } from "../../src/cache/templates/leaves";
import type { NodeMeta } from "../../src/cache/templates/turns";
import { apiMessageOf, chatViewOf } from "../../src/cache/templates/view";
import type { ResponsesKey } from "../../src/providers/responses/key";
import type { InputItem } from "../../src/providers/responses/schema";
import { responsesTemplateView as view } from "../../src/providers/responses/template-view";
import { messageReader } from "../../src/store/templates/message-reader";
import { answerOf, callOutput, keyOf } from "./template-view.responses.support";

/**
 * The refund desk in Responses' shape, learned through the view by the pure learner as the tree's learner reads
 * it (src/store/templates/learn.ts: path messages in chat hash form through messageReader, the answer and the
 * stored path as their views): the user names an order, the model looks it up (get_order), the tool result
 * holds the order's email, and the model's refund call copies the order id and the email from it.
 */
/** An order; `reasoning`: the model's answers carry a reasoning item of their own (as a reasoning model's do). */
type Order = { id: string; email: string; status?: string; reasoning?: boolean };
const ORDERS: Order[] = [
  { id: "A-1001", email: "ada@example.com" },
  { id: "B-2002", email: "bob@example.org" },
  { id: "C-3003", email: "cyd@example.net" },
];
const FOURTH: Order = { id: "D-4004", email: "dan@example.io" };
const reader = messageReader(view);
const answered: NodeMeta = { finishReason: "completed", observations: 1, promptTokens: 10, completionTokens: 5, latencyMs: 100 };

/** The second request of an order's run: the user's message, the model's get_order call as it wrote it, the order. */
function secondInput(o: Order): InputItem[] {
  return [
    { role: "user", content: `Please refund order ${o.id}.` },
    { type: "function_call", id: "fc_up1", status: "completed", call_id: `call_${o.id}`, name: "get_order", arguments: `{"order_id": "${o.id}"}` },
    { type: "function_call_output", call_id: `call_${o.id}`, output: JSON.stringify({ order_id: o.id, email: o.email, status: o.status ?? "delivered" }) },
  ];
}

/** The answer the model gives it: the refund call, the id and the email copied from the tool result. */
const refundCall = (o: Order) => callOutput(`call_r_${o.id}`, "refund", JSON.stringify({ order_id: o.id, email: o.email }));
const answerItems = (o: Order): unknown[] =>
  o.reasoning ? [{ type: "reasoning", id: `rs_${o.id}`, summary: [], encrypted_content: `enc-${o.id}`, status: "completed" }, refundCall(o)] : [refundCall(o)];

/** One recorded run at its second turn: key, recorded answer, and the trajectory learning reads. */
function recorded(o: Order): { key: ResponsesKey; hash: string; t: Partner } {
  const key = keyOf(secondInput(o));
  const { hash, message } = answerOf(key, answerItems(o));
  const json = JSON.stringify(message);
  const t: Trajectory = {
    root: key.treeId,
    hashes: key.path.map((s) => s.hash),
    messages: key.path.map((s) => reader.hashForm(s.json)),
    stored: key.path.map((s) => reader.stored(s.json)),
    answer: reader.answer(json),
    meta: { finishReason: "completed", promptTokens: 10, completionTokens: 5, latencyMs: 100 },
  };
  return { key, hash, t: { ...t, answerHash: hash, nodes: [undefined, answered, undefined] } };
}

/** The pure learner over the three recorded runs, in order: the templates it holds at the end. */
function learnDesk(reasoning = false): LearnedTemplate[] {
  const templates = new Map<string, LearnedTemplate>();
  const partners: Partner[] = [];
  for (const o of ORDERS) {
    const { hash, t } = recorded({ ...o, reasoning });
    const step = learnStep(t, t.messages.map(decomposeOnce), hash, t.nodes, [...templates.values()], partners);
    expect(step.skipped).toEqual([]);
    for (const template of [...step.updated, ...step.fresh]) templates.set(template.id, template);
    partners.push(t);
  }
  return [...templates.values()];
}

/** The chat key a Responses request reads as (engine/template-hook.ts chatKeyOf): its path's chat views. */
function chatKeyOf(key: ResponsesKey): RequestKey {
  const path = key.path.map((step) => {
    const message = chatViewOf(view, JSON.parse(step.json));
    if (!message) throw new Error("no chat view");
    return { ...step, role: message.role, message };
  });
  const { tenant, namespace, treeId, frameJson, model } = key;
  return { tenant, namespace, treeId, frameJson, model, path, key: key.key, ids: new ToolCallIds() };
}

/** What the learned templates answer a fourth run's second request, in Responses' form (null: a miss). */
function served(templates: LearnedTemplate[], o: Order): { key: ResponsesKey; message: unknown; template: string } | null {
  const key = keyOf(secondInput(o));
  const chatKey = chatKeyOf(key);
  const outcome = learnedOutcome(chatKey, learnedLookup(chatKey), templates, 3);
  if (!("answer" in outcome)) return null;
  return { key, message: apiMessageOf(view, outcome.answer.message), template: outcome.template };
}

describe("the refund desk learned through the Responses view", () => {
  it("Should induce a template from three runs and serve the fourth order's refund call, as the model would have recorded it", () => {
    const templates = learnDesk();
    expect(templates.length).toBeGreaterThan(0);
    const hit = served(templates, FOURTH);
    expect(hit).not.toBeNull();
    const { key, message } = hit as NonNullable<typeof hit>;
    // The node the model's own answer would have been recorded as: same stored form, same hash.
    const expected = answerOf(key, [refundCall(FOURTH)]);
    expect(message).toEqual(expected.message);
    expect(childHash(key.key, canonicalJson(view.hashForm(message)))).toBe(expected.hash);
    expect(message).toMatchObject({
      items: [{ type: "function_call", call_id: "call_1", name: "refund", arguments: '{"order_id":"D-4004","email":"dan@example.io"}' }],
    });
  });

  it("Should not serve a fourth order whose tool result differs in a word the template keeps (the order's status)", () => {
    expect(served(learnDesk(), { ...FOURTH, status: "lost" })).toBeNull();
  });

  it("Should learn no template for answers that each carry their own reasoning item (its id and encrypted content differ per run)", () => {
    // Templates by the length of the path they match after their anchor: 3 is the refund turn, 1 the get_order turn before it.
    const turns = (templates: LearnedTemplate[]) => templates.map((t) => t.pattern.suffix.length).sort();
    expect(turns(learnDesk())).toEqual([1, 3]);
    expect(turns(learnDesk(true))).toEqual([1]);
    expect(served(learnDesk(true), FOURTH)).toBeNull();
  });
});
