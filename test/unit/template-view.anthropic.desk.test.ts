import { describe, expect, it } from "vitest";
import { canonicalJson, ToolCallIds } from "../../src/core/canonical";
import type { RequestKey } from "../../src/cache/request-key";
import type { LearnedTemplate, Trajectory } from "../../src/cache/templates/induce";
import { learnedOutcome, learnedLookup } from "../../src/cache/templates/learned-answer";
import { learnStep, type Partner } from "../../src/cache/templates/learn-step";
import { decompose } from "../../src/cache/templates/leaves";
import type { NodeMeta } from "../../src/cache/templates/turns";
import { messageReader } from "../../src/store/templates/message-reader";
import type { AnthropicCanonicalMessage } from "../../src/providers/anthropic/schema";
import { childHash } from "../../src/core/hash";
import { apiMessageOf } from "../../src/cache/templates/view";
import type { AnthropicKey } from "../../src/providers/anthropic/key";
import { answered, keyed, view, viewOf } from "./template-view.anthropic.support";
import { ORDERS, FOURTH } from "../support/desk-orders";

/**
 * The refund desk of test/worker/templates-apis*.test.ts in Anthropic's shape, learned through the view by the
 * pure learner: the user names an order, the model looks it up, the tool result holds the order id and the
 * email, and the model copies both into its `refund` call (written in its own key order, kept as `input_json`).
 * Three recorded runs teach a template; the fourth order's request is answered from it, and the rendered
 * view, passed through `apiMessageOf`, is the Anthropic answer the model would give with the fourth's values.
 */

const META = { finishReason: "tool_use", promptTokens: 10, completionTokens: 5, latencyMs: 100 };

/** A run's request: the ask, the model's lookup (as the client echoes it, with the API's own ids) and the tool's result. */
function requestOf(order: string, email: string, run: number, lookup: "text" | "bare"): unknown[] {
  const use = { type: "tool_use", id: `toolu_01run${run}`, name: "get_order", input: { order_id: order } };
  return [
    { role: "user", content: `Please refund order ${order}.` },
    { role: "assistant", content: lookup === "text" ? [{ type: "text", text: "Let me look the order up." }, use] : [use] },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: use.id, content: JSON.stringify({ order_id: order, email, status: "delivered" }) }],
    },
  ];
}

/** The model's answer: a short text and the refund call, its input as the model wrote it; first its thinking when it thinks. */
function answerOf(key: AnthropicKey, order: string, email: string, run: number, thinks = false) {
  const input = { order_id: order, email };
  const thinking = thinks ? [{ type: "thinking", thinking: `Refund ${order}.`, signature: `sig-${run}` }] : [];
  return answered(
    key,
    [...thinking, { type: "text", text: `Refunding order ${order} for ${email}.` }, { type: "tool_use", id: `toolu_01ans${run}`, name: "refund", input }],
    [JSON.stringify(input)],
  );
}

/** The tree's learner reads its stored messages through the view (store/templates/message-reader.ts). */
const reader = messageReader(view);
/** What each node of a run's path is: the lookup turn (message 1) is an answer the model gave. */
const NODES: NodeMeta[] = [0, 1, 2].map((i) => ({ ...META, finishReason: i === 1 ? "tool_use" : null, observations: 1 }) as NodeMeta);

/** A recorded run as the learner reads it: its path's views in chat's hash form and as stored, and its stored answer's view. */
function run(order: string, email: string, i: number, lookup: "text" | "bare", thinks = false) {
  const key = keyed(requestOf(order, email, i, lookup));
  const answer = answerOf(key, order, email, i, thinks);
  const t: Trajectory = {
    root: key.treeId,
    hashes: key.path.map((s) => s.hash),
    messages: key.path.map((s) => reader.hashForm(s.json)),
    stored: key.path.map((s) => reader.stored(s.json)),
    answer: reader.answer(answer.json),
    meta: META,
  };
  return { key, answer, t };
}

/** The chat request key of an Anthropic request, as the engine reads it (engine/template-hook.ts): its tree and hashes, each node's message its view. */
function chatKeyOf(key: AnthropicKey): RequestKey {
  const path = key.path.map((s) => {
    const message = viewOf(JSON.parse(s.json));
    return { hash: s.hash, parent: s.parent, role: message.role, json: s.json, message };
  });
  return {
    tenant: key.tenant,
    namespace: key.namespace,
    treeId: key.treeId,
    frameJson: key.frameJson,
    model: key.model,
    path,
    key: key.key,
    ids: new ToolCallIds(),
  };
}

/** The Anthropic answer learned templates give a request, or why none. */
function servedTo(messages: unknown[], templates: LearnedTemplate[]): unknown {
  const key = chatKeyOf(keyed(messages));
  const outcome = learnedOutcome(key, learnedLookup(key), templates, 3);
  return "answer" in outcome ? apiMessageOf(view, outcome.answer.message) : outcome;
}

function learnDesk(lookup: "text" | "bare", thinks = false) {
  const runs = ORDERS.map(([order, email], i) => run(order, email, i, lookup, thinks));
  const partners: Partner[] = runs.slice(0, 2).map((r) => ({ ...r.t, answerHash: r.answer.hash, nodes: NODES }));
  const last = runs[2];
  return learnStep(last.t, last.t.messages.map(decompose), last.answer.hash, NODES, [], partners);
}

describe("the refund desk on Anthropic Messages, learned through the view", () => {
  it.each(["text", "bare"] as const)(
    "Should induce templates from three runs and answer the fourth order with its id and email as the model writes its call (lookup turn: %s)",
    (lookup) => {
      const step = learnDesk(lookup);
      expect(step.skipped).toEqual([]);
      // The refund turn's template, and the lookup turn's (an earlier turn: its answer is a recorded one).
      expect(step.fresh.map((t) => [t.pattern.anchorDepth, t.pattern.suffix.length, t.state.bindings.length])).toEqual([
        [0, 3, 3],
        [0, 1, 3],
      ]);
      const fourth = run(FOURTH[0], FOURTH[1], 3, lookup);
      const served = servedTo(requestOf(FOURTH[0], FOURTH[1], 3, lookup), step.fresh);
      expect(served).toEqual(fourth.answer.message);
      expect(served).toEqual({
        role: "assistant",
        content: [
          { type: "text", text: "Refunding order D-4004 for dan@example.io." },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "refund",
            input: { order_id: "D-4004", email: "dan@example.io" },
            input_json: '{"order_id":"D-4004","email":"dan@example.io"}',
          },
        ],
      });
    },
  );

  it("Should answer the fourth order's first request from the lookup turn's template, in the API's form", () => {
    const step = learnDesk("bare");
    const ask = requestOf(FOURTH[0], FOURTH[1], 3, "bare").slice(0, 1);
    const served = servedTo(ask, step.fresh) as AnthropicCanonicalMessage;
    expect(served).toEqual({
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_0", name: "get_order", input: { order_id: "D-4004" }, input_json: '{"order_id":"D-4004"}' }],
    });
    // The hash the engine gives the served answer is the one the adapter gives that answer when the model sends it.
    const key = keyed(ask);
    const sent = served.content.map(({ input_json: _text, ...block }) => block);
    expect(childHash(key.key, canonicalJson(view.hashForm(served)))).toBe(answered(key, sent).hash);
  });

  it("Should not answer an order whose tool result names another status than the three runs saw", () => {
    const step = learnDesk("text");
    const messages = requestOf(FOURTH[0], FOURTH[1], 3, "text");
    const result = messages[2] as { content: Array<{ content: string }> };
    result.content[0].content = result.content[0].content.replace("delivered", "lost");
    expect(servedTo(messages, step.fresh)).not.toHaveProperty("role");
  });

  it("Should make no template of answers whose thinking differs (thinking is kept whole: it is no data)", () => {
    const step = learnDesk("bare", true);
    expect(step.skipped).toEqual([]);
    // Only the lookup turn's template (its answers think nothing): none answers the refund turn.
    expect(step.fresh.map((t) => t.pattern.suffix.length)).toEqual([1]);
    expect(servedTo(requestOf(FOURTH[0], FOURTH[1], 3, "bare"), step.fresh)).not.toHaveProperty("role");
  });
});
