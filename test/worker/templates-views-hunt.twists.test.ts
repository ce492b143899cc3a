import { afterEach, describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { type ApiName, ask, FOURTH, type Model, ORDERS, orderOf, scriptModel, served, teach } from "./templates-views-hunt.support";
import { responsesReply } from "../support/responses-reply";

/**
 * Adversarial fourth requests on the template views, through the Worker. Three orders teach the refund turn of
 * a tool loop (the ask, the model's `get_order` call echoed, the tool's result holding the order and the email;
 * the model answers a text and a `refund` call copying both). The fourth order then comes with one twist the
 * view must not read away: a flag, a block, part or item of another kind, a boundary moved, a field the model
 * reads. The scripted model sees the twist and declines instead; a template that served the refund would be
 * a wrong replay. Twists the model does not read (`seen: false`: a cache hint, the same text in another
 * spelling of the API) must still get the refund, from the template or the model.
 */

afterEach(() => vi.restoreAllMocks());

type Body = Record<string, unknown>;
type Msgs = Array<Record<string, unknown>>;
const SYSTEM = "You are the refund desk. Look the order up, then refund it.";
const schema = { type: "object", properties: { order_id: { type: "string" }, email: { type: "string" } } };
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const result = (o: string, e: string) => ({ order_id: o, email: e, status: "delivered" });
const said = (o: string, e: string) => `Refunding order ${o} for ${e}.`;

/** The refund turn's request on each API: the ask, the lookup call as the client echoes it, the lookup's result. */
function loop(api: ApiName, o: string, e: string): Body {
  if (api === "anthropic")
    return {
      max_tokens: 1024,
      system: SYSTEM,
      tools: [{ name: "refund", input_schema: schema }],
      messages: [
        { role: "user", content: ask(o, e) },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_01A", name: "get_order", input: { order_id: o } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: JSON.stringify(result(o, e)) }] },
      ],
    };
  if (api === "responses")
    return {
      instructions: SYSTEM,
      tools: [{ type: "function", name: "refund", parameters: schema }],
      input: [
        { role: "user", content: ask(o, e) },
        { type: "function_call", call_id: "call_1", name: "get_order", arguments: JSON.stringify({ order_id: o }) },
        { type: "function_call_output", call_id: "call_1", output: JSON.stringify(result(o, e)) },
      ],
    };
  return {
    systemInstruction: { parts: [{ text: SYSTEM }] },
    tools: [{ functionDeclarations: [{ name: "refund", parameters: schema }] }],
    contents: [
      { role: "user", parts: [{ text: ask(o, e) }] },
      { role: "model", parts: [{ functionCall: { name: "get_order", args: { order_id: o } } }] },
      { role: "user", parts: [{ functionResponse: { name: "get_order", response: result(o, e) } }] },
    ],
  };
}

/** The model: the refund (a text and the call) for a plain request, a refusal for one it sees twisted. */
function model(seen: (body: Body) => boolean): Model {
  return (api, body) => {
    const { order_id, email } = orderOf(body);
    const declines = seen(body);
    const text = declines ? `I will not refund order ${order_id} yet.` : said(order_id, email);
    const args = { order_id, email };
    if (api === "anthropic")
      return {
        id: "msg_x",
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text }, ...(declines ? [] : [{ type: "tool_use", id: "toolu_x", name: "refund", input: args }])],
        stop_reason: declines ? "end_turn" : "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    if (api === "responses")
      return responsesReply(body.model, [
        { id: "msg_x", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] },
        ...(declines ? [] : [{ id: "fc_x", type: "function_call", status: "completed", call_id: "call_x", name: "refund", arguments: JSON.stringify(args) }]),
      ]);
    return {
      candidates: [
        { content: { role: "model", parts: [{ text }, ...(declines ? [] : [{ functionCall: { name: "refund", args } }])] }, finishReason: "STOP", index: 0 },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini",
    };
  };
}

/** What an answer says: its texts and its calls (name and parsed arguments), ids aside. */
function says(api: ApiName, text: string): unknown {
  const body = JSON.parse(text) as Body;
  if (api === "anthropic") {
    const blocks = body.content as Array<{ type: string; text?: string; name?: string; input?: unknown }>;
    return blocks.map((b) => (b.type === "text" ? b.text : { name: b.name, args: b.input }));
  }
  if (api === "responses") {
    const items = body.output as Array<{ type: string; content?: Array<{ text: string }>; name?: string; arguments?: string }>;
    return items.map((i) => (i.type === "message" ? i.content?.map((p) => p.text).join("") : { name: i.name, args: JSON.parse(i.arguments ?? "null") }));
  }
  const parts = (body.candidates as Array<{ content: { parts: Array<{ text?: string; functionCall?: { name: string; args: unknown } }> } }>)[0].content.parts;
  return parts.map((p) => p.text ?? { name: p.functionCall?.name, args: p.functionCall?.args });
}

interface Twist {
  name: string;
  /** Changes the fourth request (its body, already built). */
  apply: (body: Body) => void;
  /** Whether the model reads the twist (then it declines): false for one it does not read. */
  seen: boolean;
}

const msgs = (body: Body, field: string) => body[field] as Msgs;
/** The tool result's block (Anthropic), output item (Responses) or response part (Gemini). */
const anthropicResult = (b: Body) => (msgs(b, "messages")[2].content as Msgs)[0];
const geminiParts = (b: Body, i: number) => msgs(b, "contents")[i].parts as Msgs;
const resultText = JSON.stringify(result(...FOURTH));
/** The lookup's result for the fourth order under another email than the one the user gave (a value in two places that must agree). */
const otherEmail = JSON.stringify(result(FOURTH[0], "eve@example.io"));

const TWISTS: Record<ApiName, Twist[]> = {
  anthropic: [
    { name: "the tool result's email not the user's", seen: true, apply: (b) => Object.assign(anthropicResult(b), { content: otherEmail }) },
    { name: "the tool result flagged is_error", seen: true, apply: (b) => Object.assign(anthropicResult(b), { is_error: true }) },
    {
      name: "the tool result as two text blocks",
      seen: true,
      apply: (b) => Object.assign(anthropicResult(b), { content: [resultText.slice(0, 20), resultText.slice(20)].map((text) => ({ type: "text", text })) }),
    },
    {
      name: "the tool result with an image",
      seen: true,
      apply: (b) =>
        Object.assign(anthropicResult(b), {
          content: [
            { type: "text", text: resultText },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          ],
        }),
    },
    {
      name: "a document beside the ask",
      seen: true,
      apply: (b) => {
        msgs(b, "messages")[0].content = [
          { type: "text", text: ask(...FOURTH) },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "Orders starting D are final sale." } },
        ];
      },
    },
    {
      name: "thinking echoed before the lookup",
      seen: true,
      apply: (b) => (msgs(b, "messages")[1].content as Msgs).unshift({ type: "thinking", thinking: "Look it up first.", signature: "c2ln" }),
    },
    { name: "the tool result answering another call's id", seen: true, apply: (b) => Object.assign(anthropicResult(b), { tool_use_id: "toolu_01B" }) },
    { name: "tool_choice", seen: true, apply: (b) => Object.assign(b, { tool_choice: { type: "any" } }) },
    { name: "stop_sequences", seen: true, apply: (b) => Object.assign(b, { stop_sequences: ["Human:"] }) },
    { name: "a cache_control on the tool result", seen: false, apply: (b) => Object.assign(anthropicResult(b), { cache_control: { type: "ephemeral" } }) },
    { name: "the system prompt as one text block", seen: false, apply: (b) => Object.assign(b, { system: [{ type: "text", text: SYSTEM }] }) },
  ],
  responses: [
    { name: "the output's email not the user's", seen: true, apply: (b) => Object.assign(msgs(b, "input")[2], { output: otherEmail }) },
    {
      name: "the call's output as input_text parts",
      seen: true,
      apply: (b) => Object.assign(msgs(b, "input")[2], { output: [{ type: "input_text", text: resultText }] }),
    },
    {
      name: "the call's output with an image",
      seen: true,
      apply: (b) =>
        Object.assign(msgs(b, "input")[2], {
          output: [
            { type: "input_text", text: resultText },
            { type: "input_image", image_url: `data:image/png;base64,${PNG}` },
          ],
        }),
    },
    {
      name: "a reasoning item echoed",
      seen: true,
      apply: (b) => msgs(b, "input").splice(1, 0, { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "ZW5j" }),
    },
    { name: "the output answering another call's id", seen: true, apply: (b) => Object.assign(msgs(b, "input")[2], { call_id: "call_2" }) },
    { name: "other instructions", seen: true, apply: (b) => Object.assign(b, { instructions: `${SYSTEM} Orders starting D are final sale.` }) },
    {
      name: "a developer message",
      seen: true,
      apply: (b) => msgs(b, "input").unshift({ role: "developer", content: "Orders starting D are final sale." }),
    },
    {
      name: "the ask as an input_text part",
      seen: false,
      apply: (b) => Object.assign(msgs(b, "input")[0], { content: [{ type: "input_text", text: ask(...FOURTH) }] }),
    },
  ],
  gemini: [
    {
      name: "the function response's email not the user's",
      seen: true,
      apply: (b) => Object.assign(geminiParts(b, 2)[0].functionResponse as Body, { response: JSON.parse(otherEmail) }),
    },
    {
      name: "the function response named otherwise",
      seen: true,
      apply: (b) => Object.assign(geminiParts(b, 2)[0].functionResponse as Body, { name: "get_invoice" }),
    },
    { name: "the function response under role function", seen: true, apply: (b) => Object.assign(msgs(b, "contents")[2], { role: "function" }) },
    { name: "an image beside the ask", seen: true, apply: (b) => geminiParts(b, 0).push({ inlineData: { mimeType: "image/png", data: PNG } }) },
    { name: "a thought signature on the echoed call", seen: true, apply: (b) => Object.assign(geminiParts(b, 1)[0], { thoughtSignature: "c2ln" }) },
    {
      name: "the ask in two text parts",
      seen: true,
      apply: (b) => {
        const text = ask(...FOURTH);
        msgs(b, "contents")[0].parts = [{ text: text.slice(0, 7) }, { text: text.slice(7) }];
      },
    },
    { name: "a function response id", seen: true, apply: (b) => Object.assign(geminiParts(b, 2)[0].functionResponse as Body, { id: "call-9" }) },
    { name: "a generationConfig", seen: true, apply: (b) => Object.assign(b, { generationConfig: { temperature: 0 } }) },
  ],
};

describe.each(["anthropic", "responses", "gemini"] as const)("a twisted fourth order on %s", (api) => {
  it.each(TWISTS[api])("Should answer as the model would: $name", async ({ apply, seen }) => {
    // The model reads the twist: it declines the fourth order whenever the twist is one it reads (only the twisted fourth reaches it).
    const twisted = loop(api, ...FOURTH);
    apply(twisted);
    const upstream = scriptModel(model((body) => seen && orderOf(body).order_id === FOURTH[0]));
    const key = newKey();
    const name = uniqueModel(`hview-twist-${api}`);
    await teach(
      api,
      key,
      name,
      ORDERS.map(([o, e]) => loop(api, o, e)),
    );
    // The plain fourth is served from the template (what the twist is measured against).
    const control = await served(api, key, name, loop(api, FOURTH[0], FOURTH[1]));
    expect([control.cache, control.template !== null], control.text).toEqual(["hit", true]);
    const fourth = await served(api, key, name, twisted);
    expect(fourth.status, fourth.text).toBe(200);
    const [first] = says(api, fourth.text) as unknown[];
    expect(first).toBe(seen ? `I will not refund order ${FOURTH[0]} yet.` : said(...FOURTH));
    // Not from a template: a miss, or a bypass where the cache keeps no such request (an image, a document).
    if (seen) expect([["miss", "bypass"].includes(fourth.cache ?? ""), fourth.template]).toEqual([true, null]);
    expect(upstream.asked()).toBe(seen ? 4 : fourth.cache === "miss" ? 4 : 3);
  });
});
