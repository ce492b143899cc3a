import { describe, expect, it } from "vitest";
import { postMessages } from "./messages.support";
import { settled } from "./settled";
import { withUpstream } from "./upstream-stub";

/**
 * Nothing incomplete is recorded from a Messages miss. A `max_tokens` stop is recorded (the frame holds
 * max_tokens, and the API's answer is the same cut again, as chat records `length`), but not when it cut a
 * tool call: the API sends the call it had begun, its input partial or `{}`, and a hit would hand the agent
 * a call the model never finished.
 */

const key = () => `sk-ant-integrity-${crypto.randomUUID()}`;
const ask = () => ({ model: `claude-integrity-${crypto.randomUUID().slice(0, 8)}`, max_tokens: 8, messages: [{ role: "user", content: "Refund order A-1." }] });

function sse(events: Array<Record<string, unknown>>): string {
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}

const start = {
  type: "message_start",
  message: {
    id: "msg_up",
    type: "message",
    role: "assistant",
    model: "claude-x",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 1 },
  },
};
const end = (stop: string) => [
  { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 8 } },
  { type: "message_stop" },
];
const text = (index: number, t: string) => [
  { type: "content_block_start", index, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index, delta: { type: "text_delta", text: t } },
  { type: "content_block_stop", index },
];
const callStart = (index: number) => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id: "toolu_up", name: "get_order", input: {} },
});

/** Sends `body` to the Worker with the upstream answering `reply`; then whether the answer was recorded. */
async function recorded(reply: { sse: string } | { json: unknown }, stream: boolean): Promise<boolean> {
  const k = key();
  const body = { ...ask(), stream };
  const upstream = "sse" in reply ? { text: reply.sse, contentType: "text/event-stream" } : reply;
  // The recording lands after the response: wait until the miss settled (a recording or none), then ask only-if-cached.
  await settled(async () => {
    const miss = await withUpstream(upstream, () => postMessages(body, { key: k }));
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await miss.text();
  });
  const again = await postMessages({ ...body, stream: false }, { key: k, headers: { "cache-control": "only-if-cached" } });
  await again.arrayBuffer();
  return again.status === 200;
}

describe("Messages stream integrity: max_tokens", () => {
  it("Should record an answer cut by max_tokens in its text (the control)", async () => {
    expect(await recorded({ sse: sse([start, ...text(0, "Let me look the order"), ...end("max_tokens")]) }, true)).toBe(true);
  });

  it("Should not record a stream cut by max_tokens inside a tool call, whether its input began or not", async () => {
    const begun = [
      start,
      ...text(0, "Looking."),
      callStart(1),
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"order_id": "A' } },
      { type: "content_block_stop", index: 1 },
      ...end("max_tokens"),
    ];
    expect(await recorded({ sse: sse(begun) }, true)).toBe(false);
    const empty = [start, ...text(0, "Looking."), callStart(1), { type: "content_block_stop", index: 1 }, ...end("max_tokens")];
    expect(await recorded({ sse: sse(empty) }, true)).toBe(false);
  });

  it("Should not record a JSON answer that max_tokens cut in a tool call", async () => {
    const message = {
      id: "msg_up",
      type: "message",
      role: "assistant",
      model: "claude-x",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "toolu_up", name: "get_order", input: {} },
      ],
      stop_reason: "max_tokens",
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 8 },
    };
    expect(await recorded({ json: message }, false)).toBe(false);
  });
});
