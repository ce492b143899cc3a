import { describe, expect, it } from "vitest";
import { importFor } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { responses } from "./responses.support";
import { settled } from "./settled";
import { withUpstream, type StubReply } from "./upstream-stub";

/**
 * Answer fidelity 3, Responses: a hit writes the numbers of the fields it serves as recorded the way the
 * upstream wrote them (`"temperature": 1.0`, as a Python server writes every float), JSON and streamed, and
 * the fields it echoes from the request the way this request wrote them. Before, all came back in
 * JavaScript's spelling (`1`), which a client that keeps the int/float difference reads as another value.
 */

const output =
  '[{"id":"msg_up1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Order A-1 is on its way.","annotations":[],"logprobs":[]}]}]';

/** A completed response's text with `fields` (text, each ending in a comma) around its output. */
const response = (fields: string, usage = '"cost":1.2e-05') =>
  `{"id":"resp_up1","object":"response","created_at":1760000000,"status":"completed","model":"stub",${fields}"output":${output},"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":21,${usage}}}`;

const PYTHON_FIELDS = '"temperature":1.0,"top_p":1.0,"top_logprobs":0,"max_output_tokens":100,"x_vendor":{"score":2.50,"n":[1e3]},';

/** The miss's text and a hit's (null when nothing was recorded) for the body text `raw`, the hit's body `hitRaw`. */
async function missAndHit(reply: StubReply, raw: string, hitRaw = raw): Promise<{ miss: string; hit: string | null }> {
  const key = `sk-fid3-${crypto.randomUUID()}`;
  const miss = await settled(() => withUpstream(reply, async () => (await responses(raw, { key })).text()));
  const res = await responses(hitRaw, { key, headers: { "cache-control": "only-if-cached" } });
  const text = await res.text();
  return { miss, hit: res.status === 504 ? null : text };
}

/** The `response` of a streamed body's `response.completed` event, as its text. */
function completedText(stream: string): string {
  const line = stream.split("\n").find((l) => l.startsWith("data: ") && l.includes('"type":"response.completed"'));
  if (!line) throw new Error("no response.completed event");
  return line.slice(6);
}

const body = (extra = "", stream = false) => `{"model":"${uniqueModel("fid3")}","input":"Where is order A-1?"${extra}${stream ? ',"stream":true' : ""}}`;

const SPELLED = ['"temperature":1.0', '"top_p":1.0', '"top_logprobs":0', '"max_output_tokens":100', '"score":2.50', '"n":[1e3]', '"cost":1.2e-05'];

describe("replay fidelity 3: Responses numbers as the upstream wrote them", () => {
  it("Should write a JSON hit's recorded fields as the JSON miss wrote them (was: `1.0` as `1`)", async () => {
    const out = await missAndHit({ text: response(PYTHON_FIELDS) }, body());
    expect(out.hit).not.toBeNull();
    for (const field of SPELLED) expect(out.hit).toContain(field);
    expect(JSON.parse(out.hit ?? "{}")).toMatchObject({ temperature: 1, top_p: 1, x_vendor: { score: 2.5, n: [1000] }, usage: { cost: 0.000012 } });
  });

  it("Should write a streamed hit's and a JSON hit's fields as the streamed miss wrote them (was: `1.0` as `1`)", async () => {
    const completed = `{"type":"response.completed","sequence_number":3,"response":${response(PYTHON_FIELDS)}}`;
    const sse = [`{"type":"response.created","sequence_number":0,"response":${response(PYTHON_FIELDS).replace('"completed"', '"in_progress"')}}`, completed];
    const raw = body("", true);
    const streamed = await missAndHit({ sse }, raw);
    expect(streamed.hit).not.toBeNull();
    const hitCompleted = completedText(streamed.hit ?? "");
    for (const field of SPELLED) expect(hitCompleted).toContain(field);
    // Every event that carries the response writes it so, `response.created` included.
    expect(streamed.hit?.split("\n").find((l) => l.includes('"type":"response.created"'))).toContain('"temperature":1.0');
  });

  it("Should write a JSON hit of a streamed recording as the stream wrote the response", async () => {
    const key = `sk-fid3-${crypto.randomUUID()}`;
    const raw = body("", true);
    const sse = [`{"type":"response.completed","sequence_number":3,"response":${response(PYTHON_FIELDS)}}`];
    await settled(() => withUpstream({ sse }, async () => (await responses(raw, { key })).text()));
    const res = await responses(raw.replace(',"stream":true', ""), { key, headers: { "cache-control": "only-if-cached" } });
    const text = await res.text();
    expect(res.status).toBe(200);
    for (const field of SPELLED) expect(text).toContain(field);
  });

  it("Should echo a request field the recording lacks as this request wrote it (was: `0.50` as `0.5`)", async () => {
    // A compatible server that echoes no sampling parameters: a hit fills them from the request.
    const out = await missAndHit({ text: response("") }, body(',"temperature":0.50,"top_p":1.0'));
    expect(out.hit).not.toBeNull();
    expect(out.hit).toContain('"temperature":0.50');
    expect(out.hit).toContain('"top_p":1.0');
  });

  it("Should write the numbers in JavaScript's spelling where the upstream did", async () => {
    const out = await missAndHit({ text: response('"temperature":1,"top_p":0.5,', '"cost":0.5') }, body());
    expect(out.hit).toContain('"temperature":1,');
    expect(out.hit).toContain('"top_p":0.5,');
    expect(out.hit).toContain('"cost":0.5');
  });

  it("Should write an imported envelope's spellings only where they write the number served there", async () => {
    const key = `sk-fid3-${crypto.randomUUID()}`;
    const model = uniqueModel("fid3");
    const user = { type: "message", role: "user", content: "Where is order A-1?" };
    const envelope = {
      temperature: 1,
      top_p: 0.5,
      "muscle-mem:numbers": [
        ["/temperature", "1.0"],
        ["/top_p", "2"],
        ["/top_p", '0.5,"x":1'],
        ["/metadata", "1.0"],
      ],
    };
    const answer = { type: "message", role: "assistant", content: [{ type: "output_text", text: "On its way." }], "muscle-mem:response": envelope };
    const line = { model, params: { "muscle-mem:api": "openai-responses" }, input: [user, answer] };
    const imported = await importFor(key, { body: JSON.stringify(line), headers: { "content-type": "application/x-ndjson" } });
    expect(imported.status).toBe(200);
    const hit = await responses({ model, input: [user] }, { key, headers: { "cache-control": "only-if-cached" } });
    const text = await hit.text();
    expect(hit.status).toBe(200);
    expect(text).toContain('"temperature":1.0');
    expect(text).toContain('"top_p":0.5,');
    expect(JSON.parse(text)).toMatchObject({ temperature: 1, top_p: 0.5, metadata: {} });
  });
});
