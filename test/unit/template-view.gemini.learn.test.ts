import { describe, expect, it } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { ToolCallIds } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import type { RequestKey } from "../../src/cache/request-key";
import { hashForm } from "../../src/cache/templates/declared";
import { explainInduce, type LearnedTemplate } from "../../src/cache/templates/induce";
import { learnedLookup, learnedOutcome } from "../../src/cache/templates/learned-answer";
import { learnStep, type Partner } from "../../src/cache/templates/learn-step";
import { decompose } from "../../src/cache/templates/leaves";
import { DEFAULT_MIN_BINDINGS } from "../../src/cache/templates/settings";
import { apiMessageOf, chatViewOf } from "../../src/cache/templates/view";
import { keyGeminiAnswer, keyGeminiRequest, type GeminiKey } from "../../src/providers/gemini/key";
import { geminiAnswerOf, renderGenerateContentJson } from "../../src/providers/gemini/render";
import type { Content, GenerateContentRequest } from "../../src/providers/gemini/schema";
import { geminiTemplateView as view } from "../../src/providers/gemini/template-view";
import { ORDERS, FOURTH } from "../support/desk-orders";

/**
 * The refund desk on native Gemini, learned through the view by the pure learner: the model looks the order up,
 * reads its email in the function response and copies order id and email into its `refund` call, its args
 * written in its own key order (kept as `argsJson`). Three orders teach a template that serves the fourth.
 */
const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };
const meta = { finishReason: "STOP", promptTokens: 10, completionTokens: 5, latencyMs: 100 };
type Order = readonly [string, string];

function request([order, email]: Order): GenerateContentRequest {
  return {
    systemInstruction: { parts: [{ text: "You are the refund desk. Look the order up before you refund it." }] },
    tools: [{ functionDeclarations: [{ name: "get_order" }, { name: "refund" }] }],
    contents: [
      { role: "user", parts: [{ text: `Please refund order ${order}.` }] },
      { role: "model", parts: [{ functionCall: { name: "get_order", args: { order_id: order } } }] },
      {
        role: "user",
        parts: [{ functionResponse: { name: "get_order", response: { order_id: order, email, status: "delivered" } } }],
      },
    ],
  };
}

/** A turn of the desk: how many contents its request holds, and the call the model answers it with (args in its own key order). */
interface Turn {
  contents: number;
  name: string;
  args: (order: Order) => Record<string, string>;
}
const LOOKUP: Turn = { contents: 1, name: "get_order", args: ([order]) => ({ order_id: order }) };
const REFUND: Turn = { contents: 3, name: "refund", args: ([order, email]) => ({ order_id: order, email }) };

/** The model's answer and the text it wrote its call's args in. */
const answerContent = (turn: Turn, order: Order, signature?: string): Content => ({
  role: "model",
  parts: [{ functionCall: { name: turn.name, args: turn.args(order) }, ...(signature ? { thoughtSignature: signature } : {}) }],
});
const argsText = (turn: Turn, order: Order) => JSON.stringify(turn.args(order));

function requestAt(turn: Turn, order: Order): GenerateContentRequest {
  const body = request(order);
  return { ...body, contents: body.contents.slice(0, turn.contents) };
}

function keyOf(turn: Turn, order: Order): GeminiKey {
  const out = keyGeminiRequest(requestAt(turn, order), "gemini-2.5-flash", scope);
  if (!out.ok) throw new Error(JSON.stringify(out));
  return out.key;
}

const viewOf = (m: unknown): CanonicalMessage => {
  const chat = chatViewOf(view, m);
  if (!chat) throw new Error(`no view: ${JSON.stringify(m)}`);
  return chat;
};

/** What each path node is: the model's get_order call (index 1) is a recorded answer. */
const nodes = [undefined, { finishReason: "STOP", observations: 1, promptTokens: 8, completionTokens: 4, latencyMs: 90 }, undefined];

/**
 * A recording as the learner reads it (src/store/templates/learn.ts prepare): the path's views in chat's hash form and
 * as stored, the answer node keyGeminiAnswer records, read through the view.
 */
function recordingOf(turn: Turn, order: Order, signature?: string): Partner {
  const key = keyOf(turn, order);
  const recorded = keyGeminiAnswer(key, answerContent(turn, order, signature), { safetyRatings: [] }, [argsText(turn, order)]);
  if (!recorded) throw new Error("not recorded");
  const stored = key.path.map((s) => viewOf(JSON.parse(s.json)));
  const answer = viewOf(JSON.parse(recorded.json));
  const path = { root: key.treeId, hashes: key.path.map((s) => s.hash), messages: stored.map(hashForm), stored };
  return { ...path, answer, meta, answerHash: recorded.hash, nodes: nodes.slice(0, turn.contents) };
}

/** The request key the learned lookup reads: Gemini's tree and node hashes, the path's views as messages. */
function requestKeyOf(body: GenerateContentRequest): RequestKey {
  const out = keyGeminiRequest(body, "gemini-2.5-flash", scope);
  if (!out.ok) throw new Error(JSON.stringify(out));
  const path = out.key.path.map((s) => ({ ...s, message: viewOf(JSON.parse(s.json)) }));
  return { ...out.key, path, ids: new ToolCallIds() };
}

/** What the learned templates answer `body`. */
function outcomeFor(body: GenerateContentRequest, templates: readonly LearnedTemplate[]): ReturnType<typeof learnedOutcome> {
  const key = requestKeyOf(body);
  return learnedOutcome(key, learnedLookup(key), templates, DEFAULT_MIN_BINDINGS);
}

/**
 * Learns the desk as it is recorded, order after order, each order's lookup and then its refund: each recording
 * weighed against the templates so far, and paired with the earlier recordings of its turn (its shape), newest first.
 */
function learnDesk(): LearnedTemplate[] {
  let known: LearnedTemplate[] = [];
  const partners = new Map<Turn, Partner[]>([
    [LOOKUP, []],
    [REFUND, []],
  ]);
  for (const order of ORDERS) {
    for (const [turn, earlier] of partners) {
      const t = recordingOf(turn, order);
      const step = learnStep(t, t.messages.map(decompose), t.answerHash, t.nodes, known, earlier);
      const updated = new Map(step.updated.map((u) => [u.id, u]));
      known = [...known.map((k) => updated.get(k.id) ?? k), ...step.fresh];
      earlier.unshift(t);
    }
  }
  return known;
}

describe("Gemini template view: the refund desk learned through the view", () => {
  it("Should induce a template from three orders that serves the fourth its own order id and email, in Gemini's shape", () => {
    const outcome = outcomeFor(requestAt(REFUND, FOURTH), learnDesk());
    if (!("answer" in outcome)) throw new Error(`a miss: ${outcome.miss}`);
    const message = apiMessageOf(view, outcome.answer.message);
    // Exactly the node the adapter records for the fourth order's answer (its args as the model writes them).
    const expected = keyGeminiAnswer(keyOf(REFUND, FOURTH), answerContent(REFUND, FOURTH), {}, [argsText(REFUND, FOURTH)]);
    expect(message).toEqual(expected?.node);
    const served = geminiAnswerOf({ ...outcome.answer, message: message as CanonicalMessage } satisfies StoredAnswer);
    if (!served) throw new Error("not a Gemini answer");
    const body = renderGenerateContentJson(served, { model: "gemini-2.5-flash", responseId: "r" });
    expect(body).toContain(`"functionCall":{"name":"refund","args":${argsText(REFUND, FOURTH)}}`);
  });

  it("Should serve the fourth order's first turn (its lookup) its get_order call, learned from the three lookups", () => {
    const outcome = outcomeFor(requestAt(LOOKUP, FOURTH), learnDesk());
    if (!("answer" in outcome)) throw new Error(`a miss: ${outcome.miss}`);
    expect(apiMessageOf(view, outcome.answer.message)).toEqual({
      role: "model",
      parts: [{ functionCall: { name: "get_order", argsJson: '{"order_id":"D-4004"}' } }],
    });
  });

  it("Should not serve the fourth order when its function response says another status (a closed-class word is structural)", () => {
    const templates = learnDesk();
    const cancelled = request(FOURTH);
    const response = cancelled.contents[2].parts[0].functionResponse as { response: Record<string, unknown> };
    response.response.status = "cancelled";
    expect("answer" in outcomeFor(request(FOURTH), templates)).toBe(true);
    expect("answer" in outcomeFor(cancelled, templates)).toBe(false);
  });

  it("Should pair no two runs whose answers carry thought signatures that differ (a signature is structural), and pair them without", () => {
    const [a, b] = ORDERS.slice(0, 2).map((order, i) => recordingOf(REFUND, order, `c2ln${i}`));
    expect(explainInduce(a, b)).toEqual({ reason: "the answers differ in shape" });
    const [c, d] = ORDERS.slice(0, 2).map((order) => recordingOf(REFUND, order, "c2ln"));
    expect(explainInduce(c, d)).toHaveProperty("template");
  });
});
