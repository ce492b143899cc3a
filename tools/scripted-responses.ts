import type { ServerResponse } from "node:http";

/** The parts of a `POST /v1/responses` body the scripted server reads. */
export interface ResponsesBody {
  model: string;
  input: string | Array<{ role?: string; content?: unknown }>;
  stream?: boolean;
  [key: string]: unknown;
}

let nextId = 0;

function inputText(input: ResponsesBody["input"]): string {
  if (typeof input === "string") return input;
  const last = input[input.length - 1];
  if (typeof last?.content === "string") return last.content;
  return Array.isArray(last?.content) ? last.content.map((p: { text?: string }) => p.text ?? "").join("") : "";
}

/**
 * Answers a Responses API request with `echo: <last input>`, as one JSON
 * `response` or as its event stream (`response.created`, text deltas,
 * `response.completed`). Enough to prove that the Worker passes it through.
 */
export function answerResponses(res: ServerResponse, body: ResponsesBody): void {
  const id = `resp_scripted${nextId++}`;
  const itemId = `msg_scripted${nextId++}`;
  const text = `echo: ${inputText(body.input)}`;
  const item = { id: itemId, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] };
  const usage = {
    input_tokens: 5,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 3,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 8,
  };
  const response = (status: string, output: unknown[]) => ({
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: body.model,
    output,
    usage: status === "completed" ? usage : null,
  });
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(response("completed", [item])));
    return;
  }
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  send("response.created", { response: response("in_progress", []) });
  send("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } });
  send("response.content_part.added", { item_id: itemId, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  for (let i = 0; i < text.length; i += 4)
    send("response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta: text.slice(i, i + 4), logprobs: [] });
  send("response.output_text.done", { item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] });
  send("response.content_part.done", { item_id: itemId, output_index: 0, content_index: 0, part: item.content[0] });
  send("response.output_item.done", { output_index: 0, item });
  send("response.completed", { response: response("completed", [item]) });
  res.end();
}
