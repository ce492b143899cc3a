import { describe, expect, it } from "vitest";
import { uniqueModel } from "./helpers";
import { responses } from "./responses.support";
import { settled } from "./settled";
import { withUpstream, type StubReply } from "./upstream-stub";

/**
 * Answer fidelity 4, Responses output items: a number inside an output item written otherwise than JSON.stringify
 * would (a vendor field's `1.0`, a logprob `-1.2e-05` as Python writes it) is served as written or the answer is
 * not recorded. Before, the items were stored as parsed and a hit wrote `1` and `-0.000012`, JSON and streamed,
 * which a client that keeps the int/float difference (Python's `json`) reads as another value.
 */

const part = (extra: string) => `{"type":"output_text","text":"On its way.","annotations":[]${extra}}`;
const item = (extra: string, partExtra = "") =>
  `{"id":"msg_up1","type":"message","status":"completed","role":"assistant"${extra},"content":[${part(partExtra)}]}`;
const response = (output: string) =>
  `{"id":"resp_up1","object":"response","created_at":1760000000,"status":"completed","model":"stub","output":[${output}],"usage":{"input_tokens":12,"output_tokens":9,"total_tokens":21}}`;

/** A miss answered by `reply` (streamed when `stream`), then a JSON and a streamed hit (null when nothing was recorded). */
async function missAndHits(reply: StubReply, stream: boolean) {
  const key = `sk-fid4-${crypto.randomUUID()}`;
  const body = (asStream: boolean) => `{"model":"${uniqueModel("fid4r")}","input":"Where is order A-1?"${asStream ? ',"stream":true' : ""}}`;
  const model = uniqueModel("fid4r");
  const raw = (asStream: boolean) => body(asStream).replace(/"model":"[^"]*"/, `"model":"${model}"`);
  await settled(() => withUpstream(reply, async () => (await responses(raw(stream), { key })).text()));
  const probe = async (asStream: boolean) => {
    const res = await responses(raw(asStream), { key, headers: { "cache-control": "only-if-cached" } });
    const text = await res.text();
    return res.status === 504 ? null : text;
  };
  return { json: await probe(false), stream: await probe(true) };
}

const completed = (r: string) => ({ sse: [`{"type":"response.completed","sequence_number":1,"response":${r}}`] });

describe("replay fidelity 4: numbers inside Responses output items", () => {
  it.each([
    ["an item's vendor field", item(',"x_score":1.0'), "1.0"],
    ["a part's vendor field", item("", ',"x_conf":{"p":2.50}'), "2.50"],
    ["a part's logprob as Python writes it", item("", ',"logprobs":[{"token":"On","logprob":-1.2e-05,"bytes":[79,110],"top_logprobs":[]}]'), "-1.2e-05"],
  ])("Should serve %s as written or not record it, JSON and streamed (was: JavaScript's spelling)", async (_, output, text) => {
    for (const [reply, stream] of [
      [{ text: response(output) }, false],
      [completed(response(output)), true],
    ] as Array<[StubReply, boolean]>) {
      const out = await missAndHits(reply, stream);
      for (const hit of [out.json, out.stream]) expect(hit === null || hit.includes(text)).toBe(true);
    }
  });

  it("Should still record output items whose numbers JavaScript writes as they were written", async () => {
    const output = item(',"x_score":0.5,"x_conf":{"p":2.5,"n":[1e-7]}');
    const json = await missAndHits({ text: response(output) }, false);
    expect(json.json).toContain('"x_score":0.5');
    expect(json.stream).toContain('"x_conf":{"n":[1e-7],"p":2.5}');
    const streamed = await missAndHits(completed(response(output)), true);
    expect(streamed.json).toContain('"x_score":0.5');
  });
});
