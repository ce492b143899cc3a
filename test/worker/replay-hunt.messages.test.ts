import { describe, expect, it } from "vitest";
import { postMessages } from "./messages.support";
import { settled } from "./settled";
import { withUpstream, type StubReply } from "./upstream-stub";

/**
 * The answer side of a wrong replay, Anthropic Messages: a hit must be what the model sent (ids aside), read
 * from the bytes a client parses (Python's `json` keeps `1.0` a float and a dict in the order written), or
 * the answer must not be recorded.
 */

const model = () => `claude-hunt-${crypto.randomUUID().slice(0, 8)}`;

/** The upstream's JSON message around `content`, written as text (so that numbers keep their spelling). */
function messageText(m: string, content: string, stop = "tool_use", sequence = "null"): string {
  return `{"id":"msg_up","type":"message","role":"assistant","model":"${m}","content":[${content}],"stop_reason":"${stop}","stop_sequence":${sequence},"usage":{"input_tokens":5,"output_tokens":7}}`;
}

/** A Messages event stream of `events` (each `[name, data text]`). */
function eventText(events: Array<[string, string]>): string {
  return events.map(([name, data]) => `event: ${name}\ndata: ${data}\n\n`).join("");
}

/** The miss (its body as sent to the client) and the text of a JSON and a streamed hit (null when nothing was recorded). */
async function missAndHits(m: string, reply: StubReply, streamed: boolean) {
  const key = `sk-ant-hunt-${crypto.randomUUID()}`;
  const body = { model: m, max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }] };
  const miss = await settled(() =>
    withUpstream(reply, async () => {
      const res = await postMessages({ ...body, stream: streamed }, { key });
      expect(res.headers.get("muscle-mem-cache")).toBe("miss");
      return res.text();
    }),
  );
  const probe = async (stream: boolean) => {
    const res = await postMessages({ ...body, stream }, { key, headers: { "cache-control": "only-if-cached" } });
    const text = await res.text();
    return res.status === 504 ? null : text;
  };
  return { miss, json: await probe(false), stream: await probe(true) };
}

/** The `partial_json` of a stream's tool input, joined. */
function partialJson(stream: string): string {
  return stream
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as { delta?: { type?: string; partial_json?: string } })
    .filter((e) => e.delta?.type === "input_json_delta")
    .map((e) => e.delta?.partial_json ?? "")
    .join("");
}

/** The raw text of the first `"input":` value in a JSON message body. */
function inputText(json: string): string {
  const start = json.indexOf('"input":') + '"input":'.length;
  let depth = 0;
  for (let i = start; i < json.length; i++) {
    if (json[i] === "{") depth++;
    else if (json[i] === "}" && --depth === 0) return json.slice(start, i + 1);
  }
  throw new Error("no input");
}

/** A tool input whose text JSON.stringify would not write back: integer-like keys after others, `1.0`, `2.50`, `1e3`. */
const INPUT = '{"b":"x","2":"two","1":"one","qty":1.0,"amount":2.50,"big":1e3,"nested":{"z":[1.0,-2.5e-3]}}';

describe("replay hunt: Anthropic Messages", () => {
  it("Should serve a JSON answer's tool input as the body wrote it, JSON and streamed (was: `1.0` served as `1`, integer-like keys moved first)", async () => {
    const m = model();
    const out = await missAndHits(m, { text: messageText(m, `{"type":"tool_use","id":"toolu_1","name":"refund","input":${INPUT}}`) }, false);
    expect(inputText(out.miss)).toBe(INPUT);
    expect(out.json && inputText(out.json)).toBe(INPUT);
    expect(out.stream && partialJson(out.stream)).toBe(INPUT);
  });

  it("Should serve a streamed answer's tool input as its partial_json wrote it, streamed and JSON (was: the JSON hit re-serialised it)", async () => {
    const m = model();
    const sse = eventText([
      [
        "message_start",
        `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"${m}","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
      ],
      ["content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"refund","input":{}}}'],
      [
        "content_block_delta",
        `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(INPUT.slice(0, 20))}}}`,
      ],
      ["content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(INPUT.slice(20))}}}`],
      ["content_block_stop", '{"type":"content_block_stop","index":0}'],
      ["message_delta", '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}'],
      ["message_stop", '{"type":"message_stop"}'],
    ]);
    const out = await missAndHits(m, { text: sse, contentType: "text/event-stream" }, true);
    expect(partialJson(out.miss)).toBe(INPUT);
    expect(out.stream && partialJson(out.stream)).toBe(INPUT);
    expect(out.json && inputText(out.json)).toBe(INPUT);
  });

  it("Should not record a stream whose message_start carries content the blocks do not restate", async () => {
    const m = model();
    const sse = eventText([
      [
        "message_start",
        `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"${m}","content":[{"type":"text","text":"Pre"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
      ],
      ["content_block_start", '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}'],
      ["content_block_delta", '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"fix"}}'],
      ["content_block_stop", '{"type":"content_block_stop","index":1}'],
      ["message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}'],
      ["message_stop", '{"type":"message_stop"}'],
    ]);
    const out = await missAndHits(m, { text: sse, contentType: "text/event-stream" }, true);
    expect(out.json).toBeNull();
  });

  it("Should not record a stream with a block at an index that is not a place in the list or already taken, or a delta that is not text (was: the block dropped, or `[object Object]`)", async () => {
    const start = (m: string) =>
      `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"${m}","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`;
    const end: Array<[string, string]> = [
      ["message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}'],
      ["message_stop", '{"type":"message_stop"}'],
    ];
    const block = (index: string, text: string): Array<[string, string]> => [
      ["content_block_start", `{"type":"content_block_start","index":${index},"content_block":{"type":"text","text":""}}`],
      ["content_block_delta", `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${text}}}`],
      ["content_block_stop", `{"type":"content_block_stop","index":${index}}`],
    ];
    const served: Array<string | null> = [];
    for (const blocks of [
      [...block("0", '"Hi"'), ...block("-1", '"Refund refused."')],
      [...block("0", '"Hi"'), ...block("1.5", '"Refund refused."')],
      [...block("0", '"Refund refused."'), ...block("0", '"Hi"')],
      block("0", '{"value":"Hi"}'),
    ]) {
      const m = model();
      served.push((await missAndHits(m, { text: eventText([["message_start", start(m)], ...blocks, ...end]), contentType: "text/event-stream" }, true)).json);
    }
    expect(served).toEqual([null, null, null, null]);
  });

  it("Should not record answers a hit could not serve whole: citations, server tools, a pause, a refusal, a call cut by max_tokens", async () => {
    const cited =
      '{"type":"text","text":"Per policy.","citations":[{"type":"char_location","cited_text":"x","document_index":0,"document_title":null,"start_char_index":0,"end_char_index":1}]}';
    const server =
      '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"text","text":"Found."}';
    const call = '{"type":"text","text":"Refunding."},{"type":"tool_use","id":"toolu_1","name":"refund","input":{"order":"A-"}}';
    const served: Array<string | null> = [];
    for (const [content, stop] of [
      [cited, "end_turn"],
      [server, "end_turn"],
      ['{"type":"text","text":"Searching"}', "pause_turn"],
      ['{"type":"text","text":""}', "refusal"],
      [call, "max_tokens"],
      ['{"type":"text","text":"Too long"}', "model_context_window_exceeded"],
    ]) {
      const m = model();
      served.push((await missAndHits(m, { text: messageText(m, content, stop) }, false)).json);
    }
    expect(served).toEqual([null, null, null, null, null, null]);
  });

  it("Should serve an answer with no content blocks as an empty content list", async () => {
    const m = model();
    const out = await missAndHits(m, { text: messageText(m, "", "end_turn") }, false);
    expect(out.json && JSON.parse(out.json).content).toEqual([]);
  });

  it("Should not record text with a lone surrogate", async () => {
    const m = model();
    const text = String.raw`a\ud800b\u2028c\u0000d`;
    const out = await missAndHits(m, { text: messageText(m, `{"type":"text","text":"${text}"}`, "end_turn") }, false);
    expect([out.json, out.stream]).toEqual([null, null]);
  });

  it("Should not record a tool input JSON.parse would change: a repeated key, -0, 1e400, 20 digits, JSON or streamed", async () => {
    const served: Array<string | null> = [];
    for (const input of ['{"a":1,"a":2}', '{"n":-0}', '{"n":1e400}', '{"n":12345678901234567890}']) {
      const m = model();
      const json = await missAndHits(m, { text: messageText(m, `{"type":"tool_use","id":"toolu_1","name":"refund","input":${input}}`) }, false);
      served.push(json.json);
      const streamed = eventText([
        [
          "message_start",
          `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"${m}x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
        ],
        ["content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"refund","input":{}}}'],
        ["content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(input)}}}`],
        ["content_block_stop", '{"type":"content_block_stop","index":0}'],
        ["message_delta", '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}'],
        ["message_stop", '{"type":"message_stop"}'],
      ]);
      served.push((await missAndHits(`${m}x`, { text: streamed, contentType: "text/event-stream" }, true)).json);
    }
    expect(served).toEqual(Array(8).fill(null));
  });

  it("Should serve the stop sequence that matched", async () => {
    const m = model();
    const out = await missAndHits(m, { text: messageText(m, '{"type":"text","text":"Done"}', "stop_sequence", '"END"') }, false);
    expect(out.json).toContain('"stop_reason":"stop_sequence","stop_sequence":"END"');
  });
});
