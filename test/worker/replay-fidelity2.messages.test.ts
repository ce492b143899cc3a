import { describe, expect, it } from "vitest";
import { postMessages } from "./messages.support";
import { settled } from "./settled";
import { withUpstream, type StubReply } from "./upstream-stub";

/**
 * Answer fidelity, Anthropic Messages: a number the model wrote otherwise than JSON.stringify would (`1.0`) in a
 * field a hit serves as recorded (a message field, a usage field that is not a token count) is served as written
 * or the answer is not recorded; Python's `json` reads `1.0` as a float and `1` as an int.
 */

const model = () => `claude-fid2-${crypto.randomUUID().slice(0, 8)}`;

const message = (m: string, extra: string, usage = "") =>
  `{"id":"msg_up","type":"message","role":"assistant","model":"${m}","content":[{"type":"text","text":"Refunded."}],"stop_reason":"end_turn","stop_sequence":null,${extra}"usage":{"input_tokens":5,"output_tokens":7${usage}}}`;

function eventText(m: string, start: string, delta: string): string {
  const events: Array<[string, string]> = [
    [
      "message_start",
      `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"${m}","content":[],"stop_reason":null,"stop_sequence":null,${start}"usage":{"input_tokens":5,"output_tokens":1}}}`,
    ],
    ["content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'],
    ["content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Refunded."}}'],
    ["content_block_stop", '{"type":"content_block_stop","index":0}'],
    ["message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},${delta}"usage":{"output_tokens":7}}`],
    ["message_stop", '{"type":"message_stop"}'],
  ];
  return events.map(([name, data]) => `event: ${name}\ndata: ${data}\n\n`).join("");
}

/** The miss's body and a hit's in the same form (null when nothing was recorded). */
async function missAndHit(m: string, reply: StubReply, stream: boolean) {
  const key = `sk-ant-fid2-${crypto.randomUUID()}`;
  const body = { model: m, max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }], stream };
  const miss = await settled(() => withUpstream(reply, async () => (await postMessages(body, { key })).text()));
  const res = await postMessages(body, { key, headers: { "cache-control": "only-if-cached" } });
  const text = await res.text();
  return { miss, hit: res.status === 504 ? null : text };
}

describe("replay fidelity 2: Anthropic Messages, a number's spelling", () => {
  it.each([
    ["a message field", '"x_score":1.0,', ""],
    ["a usage field that is not a count", "", ',"x_cost":2.50'],
  ])("Should serve %s of a JSON answer as written or not record it (was: served as JavaScript spells it)", async (_, extra, usage) => {
    const m = model();
    const out = await missAndHit(m, { text: message(m, extra, usage) }, false);
    expect(out.hit === null || /1\.0\b|2\.50/.test(out.hit)).toBe(true);
  });

  it.each([
    ["message_start's message", '"x_score":1.0,', ""],
    ["a message_delta field", "", '"x_score":1.0,'],
  ])("Should serve a number in %s of a stream as written or not record it", async (_, start, delta) => {
    const m = model();
    const out = await missAndHit(m, { text: eventText(m, start, delta), contentType: "text/event-stream" }, true);
    expect(out.hit === null || /1\.0\b/.test(out.hit)).toBe(true);
  });

  it("Should still record answers whose only such number is a token count a hit renews", async () => {
    const m = model();
    const json = await missAndHit(m, { text: message(m, "").replace('"input_tokens":5', '"input_tokens":5.0') }, false);
    expect(json.hit).not.toBeNull();
    const m2 = model();
    const stream = await missAndHit(
      m2,
      { text: eventText(m2, "", "").replace('"output_tokens":7}', '"output_tokens":7.0}'), contentType: "text/event-stream" },
      true,
    );
    expect(stream.hit).not.toBeNull();
  });
});
