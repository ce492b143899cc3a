import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { scriptChatUpstream } from "./chat-upstream.support";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";

/**
 * The sixth template hunt: an answer's `annotations` (a search model's `url_citation`) point into its text by
 * offsets (`start_index`, `end_index`), and a hit serves them as recorded. A template's answer, or a declared
 * one, rendered with a value of another length than the ones it was confirmed on moved the text under them:
 * the citation covered other words than the model's.
 */

type Citation = { type: "url_citation"; url_citation: { start_index: number; end_index: number; url: string; title: string } };

/** The model cites the refund policy after copying the order id and email. */
function answerOf(order: string, email: string): { content: string; annotations: Citation[] } {
  const content = `Refunded order ${order} to ${email} under the refund policy.`;
  const start = content.indexOf("refund policy");
  return {
    content,
    annotations: [
      { type: "url_citation", url_citation: { start_index: start, end_index: start + 13, url: "https://example.com/policy", title: "Refund policy" } },
    ],
  };
}

let upstream: { asked: () => number };
beforeEach(() => {
  upstream = scriptChatUpstream((body) => {
    const [, order = "", email = ""] = /Refund order (\S+) to (\S+)$/.exec(body.messages[1].content) ?? [];
    return answerOf(order, email);
  });
});
afterEach(() => vi.restoreAllMocks());

const request = (model: string, order: string, email: string) => ({
  model,
  messages: [
    { role: "system", content: "Refund desk; cite the policy." },
    { role: "user", content: `Refund order ${order} to ${email}` },
  ],
});

async function send(model: string, order: string, email: string, headers: Record<string, string> = {}) {
  const res = await chat(request(model, order, email), { headers });
  const body = (await res.json()) as OpenAI.ChatCompletion;
  const message = body.choices[0].message as { content: string | null; annotations?: Citation[] };
  const cited = message.annotations?.map((a) => message.content?.slice(a.url_citation.start_index, a.url_citation.end_index));
  return { cache: res.headers.get("muscle-mem-cache"), content: message.content, cited, why: res.headers.get("muscle-mem-template-miss") };
}

describe("an answer's annotations point into its text: never rendered with a value of another length", () => {
  it("Should not serve a learned template's citation over other words (an email longer than those confirmed)", async () => {
    const model = uniqueModel("hunt6-cite");
    // Emails of one length: the three answers' offsets agree, so they teach one template.
    await settled(async () => {
      for (const [order, email] of [
        ["A-1001", "ada@example.com"],
        ["B-2002", "bob@example.com"],
        ["C-3003", "cyd@example.com"],
      ])
        expect((await send(model, order, email)).cache).toBe("miss");
    });
    await learningRan();
    const got = await settled(() => send(model, "D-4004", "danny@example.com"));
    expect(got).toEqual({
      cache: "miss",
      content: answerOf("D-4004", "danny@example.com").content,
      cited: ["refund policy"],
      why: "the answer's annotations point into its text by offsets: a template's answer with annotations is never served",
    });
    expect(upstream.asked()).toBe(4);
  });

  it("Should not serve a declared answer's citation over other words (an order id longer than the bindings')", async () => {
    const model = uniqueModel("hunt6-cite-decl");
    const ask = (order: string, email: string) => settled(() => send(model, order, email, { "muscle-mem-bindings": JSON.stringify({ order_id: order }) }));
    // One email (not bound): the declared node's answer holds it as recorded.
    expect((await ask("A-1001", "ada@example.com")).cache).toBe("miss");
    expect((await ask("B-2002", "ada@example.com")).cache).toBe("miss");
    const got = await ask("SUB-40040", "ada@example.com");
    expect({ ...got, why: undefined }).toEqual({
      cache: "miss",
      content: answerOf("SUB-40040", "ada@example.com").content,
      cited: ["refund policy"],
      why: undefined,
    });
    expect(upstream.asked()).toBe(3);
  });
});
