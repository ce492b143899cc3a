import { describe, expect, it } from "vitest";
import { responses } from "./responses.support";
import { settled } from "./settled";
import { withUpstream } from "./upstream-stub";

/**
 * Nothing incomplete is recorded from a Responses miss: a stream that ends with `response.failed` or
 * `response.incomplete`, carries an `error` event, or is cut before `response.completed`, and a JSON
 * response whose status is not `completed`, are relayed as they came and never served again.
 */

const key = () => `sk-resp-integrity-${crypto.randomUUID()}`;
const body = () => ({ model: `gpt-integrity-${crypto.randomUUID().slice(0, 8)}`, store: false, input: "Refund order A-1." });
const item = {
  id: "msg_up",
  type: "message",
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text: "Refunded.", annotations: [], logprobs: [] }],
};
const response = (status: string, output: unknown[] = [item]) => ({
  id: "resp_up",
  object: "response",
  created_at: 1,
  status,
  model: "m",
  output,
  usage: { input_tokens: 5, output_tokens: 3 },
});
const events = (...list: Array<Record<string, unknown>>) =>
  list.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join("");
const created = { type: "response.created", response: response("in_progress", []) };
const added = { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } };
const delta = { type: "response.output_text.delta", item_id: "msg_up", output_index: 0, content_index: 0, delta: "Refun" };

async function recordedAfter(upstream: { text: string; contentType: string } | { json: unknown }, stream: boolean): Promise<boolean> {
  const k = key();
  const b = body();
  // Settled: the miss and what it left behind (a recording or none) are done before the only-if-cached ask.
  await settled(async () => {
    const miss = await withUpstream(upstream, () => responses({ ...b, stream }, { key: k }));
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await miss.text();
  });
  const again = await responses(b, { key: k, headers: { "cache-control": "only-if-cached" } });
  await again.arrayBuffer();
  return again.status === 200;
}

const sse = (text: string) => ({ text, contentType: "text/event-stream" });

describe("Responses stream integrity", () => {
  it("Should record a stream that reaches response.completed (the control)", async () => {
    expect(await recordedAfter(sse(events(created, added, delta, { type: "response.completed", response: response("completed") })), true)).toBe(true);
  });

  it("Should not record a stream that ends with response.incomplete or response.failed, or carries an error event", async () => {
    expect(
      await recordedAfter(
        sse(
          events(created, added, delta, {
            type: "response.incomplete",
            response: { ...response("incomplete"), incomplete_details: { reason: "max_output_tokens" } },
          }),
        ),
        true,
      ),
    ).toBe(false);
    expect(
      await recordedAfter(
        sse(events(created, added, delta, { type: "response.failed", response: { ...response("failed"), error: { code: "server_error", message: "x" } } })),
        true,
      ),
    ).toBe(false);
    expect(
      await recordedAfter(
        sse(
          events(
            created,
            added,
            delta,
            { type: "error", code: "server_error", message: "x", param: null },
            { type: "response.completed", response: response("completed") },
          ),
        ),
        true,
      ),
    ).toBe(false);
  });

  it("Should not record a stream cut before response.completed, or a JSON response that is not completed", async () => {
    expect(await recordedAfter(sse(events(created, added, delta)), true)).toBe(false);
    expect(await recordedAfter({ json: { ...response("incomplete"), incomplete_details: { reason: "max_output_tokens" } } }, false)).toBe(false);
  });
});
