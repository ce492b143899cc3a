import { describe, expect, it } from "vitest";
import { refundDesk } from "../../tools/eval-workflows/refund";
import {
  chatOfGeminiAnswer,
  chatOfGeminiRequest,
  geminiAnswerOf,
  geminiHeaders,
  geminiReplyOf,
  geminiRequest,
  geminiShape,
} from "../../tools/eval-workflows/apis/gemini";
import type { ChatBody } from "../../tools/scripted-model";
import { ANSWER, lookedUp, withoutIds } from "./eval-apis.support";

/** The chat body with its tool-call ids renamed in order of appearance (Gemini's calls carry none: each side numbers them). */
function renumbered(body: ChatBody): ChatBody {
  const ids = new Map<string, string>();
  const id = (x: string) => ids.get(x) ?? (ids.set(x, `id${ids.size}`), `id${ids.size - 1}`);
  return {
    ...body,
    messages: body.messages.map((m) => ({
      ...m,
      ...(m.tool_call_id ? { tool_call_id: id(m.tool_call_id) } : {}),
      ...(Array.isArray(m.tool_calls) ? { tool_calls: (m.tool_calls as Array<{ id: string }>).map((c) => ({ ...c, id: id(c.id) })) } : {}),
    })),
  };
}

/** `npm run eval:templates -- --api gemini`: the chat requests and answers through generateContent's shape and back. */
describe("eval on native Gemini: translations", () => {
  it("Should give the script the chat body the harness built, call ids aside (a tool call and its result included)", () => {
    const body = lookedUp();
    const { path, body: sent } = geminiRequest(body);
    expect(path).toBe("/v1beta/models/wf-refund-learned-t1:generateContent");
    expect(sent.systemInstruction).toEqual({ parts: [{ text: refundDesk.system }] });
    expect(sent.contents).toEqual([
      { role: "user", parts: [{ text: body.messages[1].content }] },
      { role: "model", parts: [{ text: "Let me look that order up." }, { functionCall: { name: "get_order", args: { order_id: "A-4242" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "get_order", response: JSON.parse(String(body.messages[3].content)) } }] },
    ]);
    expect(sent.tools).toEqual([{ functionDeclarations: expect.arrayContaining([expect.objectContaining({ name: "refund" })]) }]);
    expect((sent.tools as Array<{ functionDeclarations: unknown[] }>)[0].functionDeclarations).toHaveLength(3);
    const back = chatOfGeminiRequest(JSON.parse(JSON.stringify(sent)), "wf-refund-learned-t1");
    expect(renumbered(back)).toEqual(renumbered(body));
    expect(withoutIds(refundDesk.script(back))).toEqual(withoutIds(refundDesk.script(body)));
  });

  it("Should match each result to the earliest unanswered call of its name, and read the answer back with fresh ids", () => {
    const body = lookedUp();
    const two = { ...ANSWER, tool_calls: [ANSWER.tool_calls?.[0], { ...ANSWER.tool_calls?.[0], id: "call_r3" }] } as typeof ANSWER;
    body.messages.push(two, { role: "tool", tool_call_id: "call_r1", content: '{"n":1}' }, { role: "tool", tool_call_id: "call_r3", content: '{"n":2}' });
    const sent = geminiRequest(body).body;
    expect(sent.contents[sent.contents.length - 1].parts).toHaveLength(2);
    expect(renumbered(chatOfGeminiRequest(sent, body.model))).toEqual(renumbered(body));
    const reply = geminiReplyOf(ANSWER);
    if ("status" in reply) throw new Error("not an answer");
    const read = chatOfGeminiAnswer({ candidates: [{ content: { role: "model", parts: reply.parts }, finishReason: "STOP" }] });
    expect(withoutIds(read)).toEqual(withoutIds(ANSWER));
    expect(new Set(read.tool_calls?.map((c) => c.id)).size).toBe(2);
    // Its form is the form the scripted model gives; the text in two parts reads back the same but is another form.
    const served = { candidates: [{ content: { role: "model", parts: reply.parts } }] };
    expect(geminiShape(served)).toEqual(geminiShape(geminiAnswerOf(ANSWER)));
    const split = [{ text: "Refunding " }, { text: "now." }, ...reply.parts.slice(1)];
    expect(withoutIds(chatOfGeminiAnswer({ candidates: [{ content: { parts: split } }] }))).toEqual(withoutIds(ANSWER));
    expect(geminiShape({ candidates: [{ content: { parts: split } }] })).not.toEqual(geminiShape(served));
    expect(geminiHeaders({ authorization: "Bearer sk-eval-1", "muscle-mem-namespace": "n" })).toEqual({
      "x-goog-api-key": "sk-eval-1",
      "muscle-mem-namespace": "n",
    });
  });
});
