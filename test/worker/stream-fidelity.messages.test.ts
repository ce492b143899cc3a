import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { events, scripted, send, type Scripted } from "./stream-fidelity.support";

const PATH = "/v1/messages";
const START = (model: string) =>
  `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"${model}","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`;
const STOP = (reason: string) => [
  `{"type":"message_delta","delta":{"stop_reason":"${reason}","stop_sequence":null},"usage":{"output_tokens":9}}`,
  '{"type":"message_stop"}',
];

/** A message's stream: its start, each block's events (start, deltas, stop), the stop. */
const stream = (model: string, blocks: Array<{ start: string; deltas: string[] }>, reason: string): Scripted => ({
  sse: [
    START(model),
    ...blocks.flatMap((b, index) => [
      `{"type":"content_block_start","index":${index},"content_block":${b.start}}`,
      ...b.deltas.map((d) => `{"type":"content_block_delta","index":${index},"delta":${d}}`),
      `{"type":"content_block_stop","index":${index}}`,
    ]),
    ...STOP(reason),
  ],
});

const json = (model: string, content: string, reason: string): Scripted => ({
  json: `{"id":"msg_1","type":"message","role":"assistant","model":"${model}","content":[${content}],"stop_reason":"${reason}","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":9}}`,
});

const THINKING = {
  start: '{"type":"thinking","thinking":"","signature":""}',
  deltas: ['{"type":"thinking_delta","thinking":"Look it up."}', '{"type":"signature_delta","signature":"RXFzaWc="}'],
};
const TEXT = { start: '{"type":"text","text":""}', deltas: ['{"type":"text_delta","text":"Checking "}', '{"type":"text_delta","text":"the order."}'] };
const TOOL = {
  start: '{"type":"tool_use","id":"toolu_1","name":"get_order","input":{},"caller":{"type":"direct"}}',
  deltas: ['{"type":"input_json_delta","partial_json":"{\\"order_id\\":"}', '{"type":"input_json_delta","partial_json":"\\"A-1\\"}"}'],
};
const JSON_CONTENT =
  '{"type":"thinking","thinking":"Look it up.","signature":"RXFzaWc="},{"type":"text","text":"Checking the order."},{"type":"tool_use","id":"toolu_1","name":"get_order","input":{"order_id":"A-1"},"caller":{"type":"direct"}}';

type Block = Record<string, unknown>;
const contentOf = (text: string): Block[] => (JSON.parse(text) as { content: Block[] }).content;
const EXPECTED: Block[] = [
  { type: "thinking", thinking: "Look it up.", signature: "RXFzaWc=" },
  { type: "text", text: "Checking the order." },
  { type: "tool_use", name: "get_order", input: { order_id: "A-1" }, caller: { type: "direct" } },
];

describe("a streamed Messages answer is recorded whole", () => {
  it("Should record thinking (signature_delta), text and a tool call's extra field streamed, serve them JSON and streamed, and walk the echoed next turn", async () => {
    const headers = { "x-api-key": newKey(), "anthropic-version": "2023-06-01" };
    const model = uniqueModel("msg-whole");
    const body = { model, max_tokens: 100, messages: [{ role: "user", content: "Refund order A-1." }], stream: true };
    const { value, asked } = await scripted(
      (_, streamed) => (streamed ? stream(model, [THINKING, TEXT, TOOL], "tool_use") : json(model, JSON_CONTENT, "tool_use")),
      async () => [await send(PATH, body, headers), await send(PATH, { ...body, stream: false }, headers), await send(PATH, body, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit", "hit"]);
    expect(asked).toBe(1);
    const served = contentOf(value[1].text);
    expect(served).toMatchObject(EXPECTED);
    const starts = events(value[2].text).filter((e) => e.type === "content_block_start");
    expect(starts[2]?.content_block).toMatchObject({ type: "tool_use", caller: { type: "direct" } });
    expect(value[2].text).toContain('"signature":"RXFzaWc="');
    // The SDK echoes the content blocks as served, then the tool's result.
    const second = {
      ...body,
      messages: [
        ...body.messages,
        { role: "assistant", content: served },
        { role: "user", content: [{ type: "tool_result", tool_use_id: served[2]?.id, content: '{"status":"shipped"}' }] },
      ],
    };
    const next = await scripted(
      () => stream(model, [TEXT], "end_turn"),
      async () => [await send(PATH, second, headers), await send(PATH, second, headers)],
    );
    expect(next.value.map((r) => r.cache)).toEqual(["miss", "hit"]);
  });

  it("Should serve a JSON answer's thinking signature and tool call's extra field on a streamed hit", async () => {
    const headers = { "x-api-key": newKey(), "anthropic-version": "2023-06-01" };
    const model = uniqueModel("msg-json");
    const body = { model, max_tokens: 100, messages: [{ role: "user", content: "Refund order A-1." }] };
    const { value } = await scripted(
      () => json(model, JSON_CONTENT, "tool_use"),
      async () => [await send(PATH, body, headers), await send(PATH, { ...body, stream: true }, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit"]);
    const deltas = events(value[1].text)
      .filter((e) => e.type === "content_block_delta")
      .map((e) => e.delta as Block);
    expect(deltas).toContainEqual({ type: "signature_delta", signature: "RXFzaWc=" });
    expect(events(value[1].text).filter((e) => e.type === "content_block_start")[2]?.content_block).toMatchObject({ caller: { type: "direct" } });
  });

  it("Should not record a stream with a delta field, a delta type or a block it cannot put back (citations, server tools, unknown)", async () => {
    const headers = { "x-api-key": newKey(), "anthropic-version": "2023-06-01" };
    const cases: Array<Array<{ start: string; deltas: string[] }>> = [
      // A text delta with a field beside its text: before 11-28 the field was dropped and the text recorded.
      [{ start: TEXT.start, deltas: ['{"type":"text_delta","text":"Checking.","x_vendor":"kept?"}'] }],
      [{ start: '{"type":"text","text":"","citations":[]}', deltas: ['{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}'] }],
      [{ start: '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}', deltas: ['{"type":"input_json_delta","partial_json":"{}"}'] }],
      [{ start: '{"type":"future_block","data":"?"}', deltas: [] }],
    ];
    const models = cases.map(() => uniqueModel("msg-refused"));
    const { value, asked } = await scripted(
      (b) => stream(String(b.model), cases[models.indexOf(String(b.model))], "end_turn"),
      async () => {
        const out = [];
        for (const model of models) {
          const body = { model, max_tokens: 100, messages: [{ role: "user", content: "Search." }], stream: true };
          out.push(await send(PATH, body, headers), await send(PATH, body, headers));
        }
        return out;
      },
    );
    expect(value.map((r) => r.cache)).toEqual(Array(8).fill("miss"));
    expect(asked).toBe(8);
  });
});
