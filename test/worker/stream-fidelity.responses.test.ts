import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { events, scripted, send, type Scripted } from "./stream-fidelity.support";

const PATH = "/v1/responses";
const USAGE = '{"input_tokens":5,"output_tokens":3,"total_tokens":8}';
const ITEM = '{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Refunded.","annotations":[]}]}';
const REASONING = '{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAB-opaque","x_vendor":{"depth":2}}';

const response = (status: string, output: string) =>
  `{"id":"resp_1","object":"response","created_at":1,"status":"${status}","model":"m","output":[${output}],"usage":${status === "completed" ? USAGE : "null"}}`;

/** A stream whose `output_item.done` events carry `items` and whose `response.completed` carries `completed`. */
const stream = (items: string[], completed: string): Scripted => ({
  sse: [
    `{"type":"response.created","sequence_number":0,"response":${response("in_progress", "")}}`,
    ...items.map((item, i) => `{"type":"response.output_item.done","sequence_number":${i + 1},"output_index":${i},"item":${item}}`),
    `{"type":"response.completed","sequence_number":${items.length + 1},"response":${response("completed", completed)}}`,
  ],
});

type Output = Array<Record<string, unknown>>;
const outputOf = (text: string): Output => (JSON.parse(text) as { output: Output }).output;
const completedOf = (text: string): Output => ((events(text).find((e) => e.type === "response.completed")?.response ?? {}) as { output: Output }).output;

describe("a streamed Responses answer is recorded whole", () => {
  it("Should record the streamed items (a reasoning item's encrypted_content and unknown fields) and serve them JSON and streamed", async () => {
    const headers = { authorization: `Bearer ${newKey()}` };
    const body = { model: uniqueModel("resp-whole"), input: "Refund order #R-1.", stream: true };
    const { value, asked } = await scripted(
      () => stream([REASONING, ITEM], `${REASONING},${ITEM}`),
      async () => [await send(PATH, body, headers), await send(PATH, { ...body, stream: false }, headers), await send(PATH, body, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit", "hit"]);
    expect(asked).toBe(1);
    // Item ids are served fresh (src/providers/responses/render.ts): the rest as the model sent it.
    const { id: _r, ...reasoning } = JSON.parse(REASONING) as Record<string, unknown>;
    const { id: _m, ...message } = JSON.parse(ITEM) as Record<string, unknown>;
    const expected = [reasoning, message];
    expect(outputOf(value[1].text)).toMatchObject(expected);
    expect(completedOf(value[2].text)).toMatchObject(expected);
  });

  it("Should not record a stream whose response.completed leaves out the items it streamed (the Codex backend's empty output)", async () => {
    const headers = { authorization: `Bearer ${newKey()}` };
    const empty = { model: uniqueModel("resp-empty"), input: "Refund order #R-1.", stream: true };
    const fewer = { model: uniqueModel("resp-fewer"), input: "Refund order #R-1.", stream: true };
    const other = { model: uniqueModel("resp-other"), input: "Refund order #R-1.", stream: true };
    const { value, asked } = await scripted(
      (b) =>
        b.model === empty.model
          ? stream([REASONING, ITEM], "")
          : b.model === fewer.model
            ? stream([REASONING, ITEM], ITEM)
            : stream([REASONING, ITEM.replace("Refunded.", "Not refunded.")], `${REASONING},${ITEM}`),
      async () => {
        const out = [];
        for (const b of [empty, fewer, other]) out.push(await send(PATH, b, headers), await send(PATH, { ...b, stream: false }, headers));
        return out;
      },
    );
    // Before 11-28 each was recorded from response.completed alone: a hit served an answer without the streamed items.
    expect(value.map((r) => r.cache)).toEqual(["miss", "miss", "miss", "miss", "miss", "miss"]);
    expect(asked).toBe(6);
  });

  it("Should record a stream whose reasoning item comes encrypted afresh (and with another id) in response.completed, as OpenAI sends it, with the completed one", async () => {
    const headers = { authorization: `Bearer ${newKey()}` };
    const body = { model: uniqueModel("resp-iv"), input: "Refund order #R-1.", stream: true };
    const done = REASONING.replace("gAAAAB-opaque", "gAAAAB-first-iv").replace('"rs_1"', '"rs_0"');
    const { value } = await scripted(
      () => stream([done, ITEM], `${REASONING},${ITEM}`),
      async () => [await send(PATH, body, headers), await send(PATH, { ...body, stream: false }, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit"]);
    expect(outputOf(value[1].text)[0]).toMatchObject({ encrypted_content: "gAAAAB-opaque" });
  });

  it("Should serve a JSON answer's items (encrypted_content, unknown fields) in a streamed hit's output_item.done and response.completed", async () => {
    const headers = { authorization: `Bearer ${newKey()}` };
    const body = { model: uniqueModel("resp-json"), input: "Refund order #R-1." };
    const { value } = await scripted(
      () => ({ json: response("completed", `${REASONING},${ITEM}`) }),
      async () => [await send(PATH, body, headers), await send(PATH, { ...body, stream: true }, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit"]);
    const done = events(value[1].text)
      .filter((e) => e.type === "response.output_item.done")
      .map((e) => e.item as Record<string, unknown>);
    expect(done[0]).toMatchObject({ type: "reasoning", encrypted_content: "gAAAAB-opaque", x_vendor: { depth: 2 } });
    expect(completedOf(value[1].text)[0]).toMatchObject({ encrypted_content: "gAAAAB-opaque", x_vendor: { depth: 2 } });
  });
});
