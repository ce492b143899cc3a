import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { events, scripted, send, type Scripted } from "./stream-fidelity.support";
import { uniqueModel } from "./helpers";

const COMPAT = "/v1beta/openai/chat/completions";
const CHAT = "/v1/chat/completions";
const SIGNED = '{"google":{"thought_signature":"c2lnLTE="}}';

/** A chunk as Gemini's compat layer writes it (keys sorted, no tool-call `index`: each call is sent whole on one delta). */
const chunk = (delta: string, finish: string | null = null): string =>
  `{"choices":[{"delta":${delta},"finish_reason":${finish === null ? "null" : `"${finish}"`},"index":0}],"created":1,"id":"gc-1","model":"gemini-3-flash","object":"chat.completion.chunk"}`;

/** The stream of one answer from its deltas, a finish chunk with usage, then `[DONE]`. */
const stream = (deltas: string[], finish: string): Scripted => ({
  sse: [
    ...deltas.map((d) => chunk(d)),
    `{"choices":[{"delta":{},"finish_reason":"${finish}","index":0}],"created":1,"id":"gc-1","model":"gemini-3-flash","object":"chat.completion.chunk","usage":{"completion_tokens":5,"prompt_tokens":7,"total_tokens":12}}`,
    "[DONE]",
  ],
});

/** The JSON form of the same answer. */
const json = (message: string, finish: string): Scripted => ({
  json: `{"choices":[{"finish_reason":"${finish}","index":0,"message":${message}}],"created":1,"id":"gc-1","model":"gemini-3-flash","object":"chat.completion","usage":{"completion_tokens":5,"prompt_tokens":7,"total_tokens":12}}`,
});

const CALL = `{"extra_content":${SIGNED},"function":{"arguments":"{\\"order_id\\":\\"S-1\\"}","name":"get_order"},"id":"function-call-1","type":"function"}`;
const TOOL_CALL_MESSAGE = `{"role":"assistant","tool_calls":[${CALL}]}`;
const signedAnswer = (_: unknown, streamed: boolean): Scripted =>
  streamed ? stream([`{"role":"assistant","tool_calls":[${CALL}]}`], "tool_calls") : json(TOOL_CALL_MESSAGE, "tool_calls");

type Message = { role: string; content?: string | null; tool_calls?: Array<Record<string, unknown>>; [field: string]: unknown };
const messageOf = (text: string): Message => (JSON.parse(text) as { choices: Array<{ message: Message }> }).choices[0].message;
/** The tool-call deltas of a served stream. */
const callDeltas = (text: string) =>
  events(text).flatMap((e) => (e.choices as Array<{ delta: { tool_calls?: Array<Record<string, unknown>> } }>)[0]?.delta.tool_calls ?? []);

describe("a streamed chat answer is recorded whole: Gemini's tool-call extra_content", () => {
  it("Should record a streamed call's extra_content (no index, sent whole) and serve it JSON and streamed; the echoed call walks the path", async () => {
    const key = newKey();
    const model = uniqueModel("sig-stream");
    const headers = { authorization: `Bearer ${key}` };
    const first = { model, messages: [{ role: "user", content: "Refund order #S-1." }], stream: true };
    const { value, asked } = await scripted(signedAnswer, async () => {
      const miss = await send(COMPAT, first, headers);
      const asJson = await send(COMPAT, { ...first, stream: false }, headers);
      const asStream = await send(COMPAT, first, headers);
      return { miss, asJson, asStream };
    });
    expect(value.miss.cache).toBe("miss");
    expect(value.miss.text).toContain(`"extra_content":${SIGNED}`);
    // Before 11-28 the stream reader refused the call's extra field: relayed, never recorded, a miss every time.
    expect([value.asJson.cache, value.asStream.cache]).toEqual(["hit", "hit"]);
    expect(asked).toBe(1);
    const served = messageOf(value.asJson.text).tool_calls?.[0] ?? {};
    expect(served).toMatchObject({ type: "function", function: { name: "get_order", arguments: '{"order_id":"S-1"}' }, extra_content: JSON.parse(SIGNED) });
    expect(callDeltas(value.asStream.text)[0]).toMatchObject({ index: 0, extra_content: JSON.parse(SIGNED) });
    // The next turn echoes the call as the openai package keeps it (its extra fields included), with the tool's result.
    const second = {
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant", content: null, tool_calls: [served] },
        { role: "tool", tool_call_id: served.id, content: '{"status":"shipped"}' },
      ],
    };
    const next = await scripted(
      () => stream(['{"content":"Order S-1 is shipped.","role":"assistant"}'], "stop"),
      async () => [await send(COMPAT, second, headers), await send(COMPAT, second, headers), await send(COMPAT, { ...second, stream: false }, headers)],
    );
    expect(next.value.map((r) => r.cache)).toEqual(["miss", "hit", "hit"]);
    expect(messageOf(next.value[2].text).content).toBe("Order S-1 is shipped.");
    // Without the signature it is another request: not served the signed path's answer.
    const unsigned = { ...served };
    delete unsigned.extra_content;
    const bare = { ...second, messages: [second.messages[0], { role: "assistant", content: null, tool_calls: [unsigned] }, second.messages[2]] };
    const refused = await send(COMPAT, bare, { ...headers, "cache-control": "only-if-cached" });
    expect(refused.status).toBe(504);
  });

  it("Should serve a JSON answer's extra_content on a streamed hit, and the streamed call's on a JSON hit, on OpenAI's route too", async () => {
    const key = newKey();
    const headers = { authorization: `Bearer ${key}` };
    const jsonFirst = { model: uniqueModel("sig-json"), messages: [{ role: "user", content: "Refund order #S-1." }] };
    const streamFirst = { model: uniqueModel("sig-stream"), messages: [{ role: "user", content: "Refund order #S-1." }], stream: true };
    const { value, asked } = await scripted(signedAnswer, async () => [
      await send(CHAT, jsonFirst, headers),
      await send(CHAT, { ...jsonFirst, stream: true }, headers),
      await send(CHAT, streamFirst, headers),
      await send(CHAT, { ...streamFirst, stream: false }, headers),
      await send(CHAT, jsonFirst, headers),
    ]);
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit", "miss", "hit", "hit"]);
    expect(asked).toBe(2);
    expect(callDeltas(value[1].text)[0]).toMatchObject({ extra_content: JSON.parse(SIGNED) });
    // Both forms record the same message: the JSON hit of the streamed answer is the JSON hit of the JSON answer's.
    const strip = (m: Message) => ({ ...m, tool_calls: m.tool_calls?.map(({ id: _id, ...rest }) => rest) });
    expect(strip(messageOf(value[3].text))).toEqual(strip(messageOf(value[4].text)));
  });

  it("Should not record a call whose extra field comes again with another value, nor one whose number a replay would respell", async () => {
    const key = newKey();
    const headers = { authorization: `Bearer ${key}` };
    const twice = { model: uniqueModel("sig-twice"), messages: [{ role: "user", content: "Refund order #S-1." }], stream: true };
    const spelled = { model: uniqueModel("sig-spelled"), messages: [{ role: "user", content: "Refund order #S-1." }], stream: true };
    const call = (extra: string) => `{"role":"assistant","tool_calls":[{"index":0,"extra_content":${extra}}]}`;
    const { value, asked } = await scripted(
      (body) =>
        body.model === twice.model
          ? stream(
              [`{"role":"assistant","tool_calls":[${CALL.replace('{"extra', '{"index":0,"extra')}]}`, call('{"google":{"thought_signature":"b3RoZXI="}}')],
              "tool_calls",
            )
          : stream(
              [`{"role":"assistant","tool_calls":[${CALL.replace('{"extra', '{"index":0,"extra').replace('"c2lnLTE="', '"c2lnLTE=","weight":1.0')}]}`],
              "tool_calls",
            ),
      async () => [await send(CHAT, twice, headers), await send(CHAT, twice, headers), await send(CHAT, spelled, headers), await send(CHAT, spelled, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "miss", "miss", "miss"]);
    expect(asked).toBe(4);
    // The same field sent again with the same value is the same call: recorded.
    const same = { model: uniqueModel("sig-same"), messages: [{ role: "user", content: "Refund order #S-1." }], stream: true };
    const again = await scripted(
      () => stream([`{"role":"assistant","tool_calls":[${CALL.replace('{"extra', '{"index":0,"extra')}]}`, call(SIGNED)], "tool_calls"),
      async () => [await send(CHAT, same, headers), await send(CHAT, same, headers)],
    );
    expect(again.value.map((r) => r.cache)).toEqual(["miss", "hit"]);
  });

  it("Should not record a call continued by deltas with neither index nor id (arguments in pieces, a signature alone): no rule says which call they extend", async () => {
    const headers = { authorization: `Bearer ${newKey()}` };
    const pieces = { model: uniqueModel("sig-pieces"), messages: [{ role: "user", content: "Refund order #S-1." }], stream: true };
    const alone = { model: uniqueModel("sig-alone"), messages: [{ role: "user", content: "Refund order #S-1." }], stream: true };
    const head = '{"function":{"arguments":"{\\"order_id\\":","name":"get_order"},"id":"function-call-1","type":"function"}';
    const { value, asked } = await scripted(
      (body) =>
        body.model === pieces.model
          ? stream([`{"role":"assistant","tool_calls":[${head}]}`, '{"tool_calls":[{"function":{"arguments":"\\"S-1\\"}"}}]}'], "tool_calls")
          : stream(
              [`{"role":"assistant","tool_calls":[${CALL.replace(`"extra_content":${SIGNED},`, "")}]}`, `{"tool_calls":[{"extra_content":${SIGNED}}]}`],
              "stop",
            ),
      async () => [
        await send(COMPAT, pieces, headers),
        await send(COMPAT, pieces, headers),
        await send(COMPAT, alone, headers),
        await send(COMPAT, alone, headers),
      ],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "miss", "miss", "miss"]);
    expect(asked).toBe(4);
  });
});
