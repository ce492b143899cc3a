import { describe, expect, it, vi } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { events, scripted, send, type Scripted } from "./stream-fidelity.support";

const CHAT = "/v1/chat/completions";
const chunk = (delta: string, finish: string | null = null) =>
  `{"id":"c-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${delta},"finish_reason":${finish === null ? "null" : `"${finish}"`}}]}`;
const stream = (deltas: string[], finish = "stop"): Scripted => ({ sse: [...deltas.map((d) => chunk(d)), chunk("{}", finish), "[DONE]"] });
const json = (message: string, finish = "stop"): Scripted => ({
  json: `{"id":"c-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":${message},"finish_reason":"${finish}"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`,
});

type Message = Record<string, unknown>;
const messageOf = (text: string): Message => (JSON.parse(text) as { choices: Array<{ message: Message }> }).choices[0].message;
const deltasOf = (text: string): Message[] => events(text).flatMap((e) => (e.choices as Array<{ delta: Message }>).map((c) => c.delta));

/** Sends `body` streamed then JSON then streamed under a fresh key; the three outcomes and texts. */
async function recordThenReplay(reply: (body: Record<string, unknown>, stream: boolean) => Scripted, firstStreamed = true) {
  const headers = { authorization: `Bearer ${newKey()}` };
  const body = { model: uniqueModel("deltas"), messages: [{ role: "user", content: "Why?" }], stream: firstStreamed };
  return scripted(reply, async () => [
    await send(CHAT, body, headers),
    await send(CHAT, { ...body, stream: false }, headers),
    await send(CHAT, { ...body, stream: true }, headers),
  ]);
}

describe("chat deltas with vendor fields are recorded whole or not at all", () => {
  it("Should record DeepSeek's reasoning_content streamed in pieces whole, and serve it JSON and streamed", async () => {
    const { value, asked } = await recordThenReplay(() =>
      stream(['{"role":"assistant","content":null,"reasoning_content":"Because "}', '{"reasoning_content":"it is."}', '{"content":"Yes."}']),
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit", "hit"]);
    expect(asked).toBe(1);
    expect(messageOf(value[1].text)).toMatchObject({ content: "Yes.", reasoning_content: "Because it is." });
    expect(
      deltasOf(value[2].text)
        .map((d) => d.reasoning_content ?? "")
        .join(""),
    ).toBe("Because it is.");
  });

  it("Should serve a JSON answer's OpenRouter reasoning_details on a streamed hit, and not record them streamed (an array of pieces no rule joins)", async () => {
    const details = '[{"type":"reasoning.text","text":"Because.","signature":"c2ln","format":"anthropic-claude-v1","index":0}]';
    const recordedJson = await recordThenReplay(
      () => json(`{"role":"assistant","content":"Yes.","reasoning":"Because.","reasoning_details":${details}}`),
      false,
    );
    expect(recordedJson.value.map((r) => r.cache)).toEqual(["miss", "hit", "hit"]);
    expect(deltasOf(recordedJson.value[2].text).find((d) => d.reasoning_details)?.reasoning_details).toEqual(JSON.parse(details));
    const streamed = await recordThenReplay(() =>
      stream([
        '{"role":"assistant","content":"","reasoning":"Because.","reasoning_details":[{"type":"reasoning.text","text":"Because.","format":"anthropic-claude-v1","index":0}]}',
        '{"reasoning_details":[{"type":"reasoning.text","signature":"c2ln","format":"anthropic-claude-v1","index":0}]}',
        '{"content":"Yes."}',
      ]),
    );
    expect(streamed.value.map((r) => r.cache)).toEqual(["miss", "miss", "miss"]);
    expect(streamed.asked).toBe(3);
  });

  it("Should not record a stream whose tool calls leave a gap in their indexes, or whose legacy function_call carries another field", async () => {
    const gap = await recordThenReplay(() =>
      stream(
        [
          '{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"a","arguments":"{}"}}]}',
          '{"tool_calls":[{"index":2,"id":"call_c","type":"function","function":{"name":"c","arguments":"{}"}}]}',
        ],
        "tool_calls",
      ),
    );
    expect(gap.value.map((r) => r.cache)).toEqual(["miss", "miss", "miss"]);
    const legacy = await recordThenReplay(() =>
      stream(['{"role":"assistant","content":null,"function_call":{"name":"a","arguments":"{}","thought_signature":"c2ln"}}'], "function_call"),
    );
    // Before 11-28 the function_call's other field was dropped and the call recorded without it.
    expect(legacy.value.map((r) => r.cache)).toEqual(["miss", "miss", "miss"]);
  });

  it("Should log a complete answer it leaves unrecorded (streamed and JSON), and none for one it records", async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    const notRecorded = () =>
      lines
        .filter((l) => l.startsWith("{") && (JSON.parse(l) as { event?: string }).event === "answer_not_recorded")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    try {
      await recordThenReplay(() => stream(['{"role":"assistant","content":"Yes."}']));
      expect(notRecorded()).toEqual([]);
      const legacy = '{"role":"assistant","content":null,"function_call":{"name":"a","arguments":"{}","thought_signature":"c2ln"}}';
      await recordThenReplay((_, streamed) => (streamed ? stream([legacy], "function_call") : json('{"role":"assistant","content":"Yes."}', "content_filter")));
      expect(notRecorded().map((l) => [l.event, l.level, l.stream])).toEqual([
        ["answer_not_recorded", "info", true],
        ["answer_not_recorded", "info", false],
        ["answer_not_recorded", "info", true],
      ]);
    } finally {
      spy.mockRestore();
    }
  });
});
