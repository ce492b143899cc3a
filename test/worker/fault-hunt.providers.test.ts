import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uniqueModel } from "./helpers";
import { callWorker } from "./faults.support";
import { COLD, damage } from "./fault-hunt.support";

function messagesRequest(model: string, text: string, stream: boolean, key: string): Request {
  return new Request("http://mm.test/v1/messages", {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 100, messages: [{ role: "user", content: text }], ...(stream ? { stream: true } : {}) }),
  });
}

function geminiRequest(model: string, text: string, stream: boolean, key: string): Request {
  return new Request(`http://mm.test/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": key },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }] }),
  });
}

/** A stream's text deltas joined (Anthropic `text_delta`, Responses `output_text.delta`), with the rest of its data lines, so a split text reads whole. */
function textDeltas(body: string): string {
  const lines = body.split("\n").filter((l) => l.startsWith("data: {"));
  // Anthropic's text_delta events, and Responses' output_text.delta events (a string delta).
  const deltas = lines.map((l) => JSON.parse(l.slice(6)) as { type?: string; delta?: string | { type?: string; text?: string } });
  const texts = deltas.map((e) => (typeof e.delta === "string" ? e.delta : e.delta?.type === "text_delta" ? (e.delta.text ?? "") : ""));
  return `${texts.join("")}\n${body}`;
}

function responsesRequest(model: string, text: string, stream: boolean, key: string): Request {
  return new Request("http://mm.test/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, input: text, ...(stream ? { stream: true } : {}) }),
  });
}

type Send = (model: string, text: string, stream: boolean, key: string) => Request;

/** Records the answer to one user turn `text`, damages its row with `message`, and asks again (cold). */
async function askAfterDamage(send: Send, model: string, message: string, stream: boolean): Promise<{ res: Response; body: string; text: string }> {
  const key = `sk-${crypto.randomUUID()}`;
  const text = `hunt-${crypto.randomUUID().slice(0, 8)}`;
  const first = await callWorker(send(model, text, false, key), COLD);
  expect(first.res.status).toBe(200);
  await first.res.arrayBuffer();
  await first.settled();
  const row = await env.DB.prepare(
    "SELECT hash FROM nodes WHERE role = 'assistant' AND depth = 2 AND parent IN (SELECT hash FROM nodes WHERE depth = 1 AND instr(message, ?1) > 0)",
  )
    .bind(text)
    .first<{ hash: string }>();
  if (!row) throw new Error("not recorded");
  await damage(row.hash, message);
  const call = await callWorker(send(model, text, stream, key), COLD);
  const body = new TextDecoder().decode(await call.res.arrayBuffer());
  await call.settled();
  return { res: call.res, body, text };
}

const CASES: Array<[string, Send, () => string, string]> = [
  [
    "an Anthropic tool call whose recorded input text is not JSON",
    messagesRequest,
    () => uniqueModel("echo"),
    '{"role":"assistant","content":[{"type":"tool_use","id":"toolu_0","name":"f","input":{},"input_json":"{bad"}]}',
  ],
  [
    "an Anthropic answer holding a tool_result block",
    messagesRequest,
    () => uniqueModel("echo"),
    '{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"toolu_0","content":[{"type":"text","text":"x"}]}]}',
  ],
  ["a Responses answer with no output item", responsesRequest, () => uniqueModel("echo"), '{"role":"assistant","items":[]}'],
  [
    "a Gemini function call whose recorded args text is not JSON",
    geminiRequest,
    () => "gemini-2.0-flash",
    '{"role":"model","parts":[{"functionCall":{"name":"f","argsJson":"{bad"}}]}',
  ],
];

describe("a damaged answer row on the Messages, Responses and Gemini routes", () => {
  for (const stream of [false, true]) {
    for (const [name, send, model, message] of CASES) {
      it(`Should answer from the model, never a 500 nor the row (${name}, ${stream ? "streamed" : "JSON"})`, async () => {
        const { res, body, text } = await askAfterDamage(send, model(), message, stream);
        expect(res.status).toBe(200);
        expect(res.headers.get("muscle-mem-cache")).toBe("miss");
        // The scripted Messages and Responses models echo the user turn; the scripted Gemini model looks an order up.
        expect(stream ? textDeltas(body) : body).toContain(send === geminiRequest ? "get_order" : `echo: ${text}`);
        expect(body).not.toContain("tool_result");
      });
    }
  }
});
