import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { chat, eventually, recorded, uniqueModel } from "./helpers";
import { followersWaiting, settled } from "./settled";
import { chunks, completion, withUpstream, type StubReply } from "./upstream-stub";

/**
 * Nothing incomplete is recorded from a chat miss, whatever the upstream streams, and a single-flight
 * follower of such a miss is never served it: it asks the model itself.
 */

const ask = (model: string) => ({ model, messages: [{ role: "user", content: "Refund order A-1." }] });

/** Sends `body` as a miss the upstream answers `reply`, reads it whole, and waits until what it left behind (a recording or none) is done. */
async function missed(reply: StubReply, body: Record<string, unknown>): Promise<{ cache: string | null; text: string }> {
  return settled(async () => {
    const res = await withUpstream(reply, () => chat(body));
    return { cache: res.headers.get("muscle-mem-cache"), text: await res.text() };
  });
}

/** Whether an answer was recorded for `body`: only-if-cached, once its miss settled (`missed`). */
async function isRecorded(body: Record<string, unknown>): Promise<boolean> {
  const res = await chat(body, { headers: { "cache-control": "only-if-cached" } });
  await res.arrayBuffer();
  return res.status === 200;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "up", choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
const text = [chunk({ role: "assistant", content: "" }), chunk({ content: "Refunded." })];

/** Streams that end with [DONE] and a finish reason, but carry something a hit could not replay. */
const unrecordable: Array<[string, string]> = [
  [
    "an `event: error` event (its data has no `error` key)",
    `${text.map((d) => `data: ${d}\n\n`).join("")}event: error\ndata: {"message":"upstream overloaded"}\n\ndata: ${chunk({}, "stop")}\n\ndata: [DONE]\n\n`,
  ],
  [
    "vLLM's error object after the finish chunk",
    `${[...text, chunk({}, "stop"), JSON.stringify({ object: "error", message: "engine died", type: "InternalServerError", code: 500 }), "[DONE]"].map((d) => `data: ${d}\n\n`).join("")}`,
  ],
  [
    "a second choice (index 1)",
    `${[...text, JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "up", choices: [{ index: 1, delta: { content: "Denied." }, finish_reason: "stop" }] }), chunk({}, "stop"), "[DONE]"].map((d) => `data: ${d}\n\n`).join("")}`,
  ],
  [
    "a number JSON.parse cannot hold in a field a hit serves back",
    `${[...text, chunk({}, "stop", { kv_transfer_params: { block: 1 } }).replace('"block":1', '"block":12345678901234567893'), "[DONE]"].map((d) => `data: ${d}\n\n`).join("")}`,
  ],
  [
    "a repeated key in a chunk",
    `${[...text, chunk({}, "stop", { provider: "A" }).replace('"provider":"A"', '"provider":"A","provider":"B"'), "[DONE]"].map((d) => `data: ${d}\n\n`).join("")}`,
  ],
  ["finish_reason content_filter", `${[...text, chunk({}, "content_filter"), "[DONE]"].map((d) => `data: ${d}\n\n`).join("")}`],
  [
    "a tool call cut by finish_reason length (arguments not JSON)",
    `${[chunk({ role: "assistant", content: null }), chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "refund", arguments: '{"order":' } }] }), chunk({}, "length"), "[DONE]"].map((d) => `data: ${d}\n\n`).join("")}`,
  ],
];

describe("chat stream integrity: what a streamed miss records", () => {
  for (const [what, sse] of unrecordable) {
    it(`Should relay and not record a stream with ${what}`, async () => {
      const body = ask(uniqueModel("integrity"));
      const res = await missed({ text: sse, contentType: "text/event-stream" }, { ...body, stream: true });
      expect(res.cache).toBe("miss");
      expect(res.text).toBe(sse);
      expect(await isRecorded(body)).toBe(false);
    });
  }

  it("Should record a stream cut by finish_reason length as the model sent it (text, or a tool call whose arguments are whole)", async () => {
    const body = ask(uniqueModel("integrity-length"));
    await (
      await withUpstream({ sse: chunks([{ role: "assistant", content: "" }, { content: "Refunded, and" }], "length") }, () => chat({ ...body, stream: true }))
    ).text();
    await recorded(body);
    const json = (await (await chat(body)).json()) as { choices: Array<{ finish_reason: string; message: { content: string } }> };
    expect(json.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "Refunded, and" } });
  });

  it("Should not record a JSON answer with a second choice, or a tool call cut by length; and record one whose call is whole", async () => {
    const two = ask(uniqueModel("integrity-n"));
    const both = completion({ role: "assistant", content: "Refunded." }) as { choices: object[] };
    await missed(
      {
        json: {
          ...both,
          choices: [...both.choices, { index: 1, message: { role: "assistant", content: "Denied." }, logprobs: null, finish_reason: "stop" }],
        },
      },
      two,
    );
    expect(await isRecorded(two)).toBe(false);
    const cut = ask(uniqueModel("integrity-cut"));
    const call = (args: string) => ({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "refund", arguments: args } }],
    });
    await missed({ json: completion(call('{"order":'), "length") }, cut);
    expect(await isRecorded(cut)).toBe(false);
    const whole = ask(uniqueModel("integrity-whole"));
    await missed({ json: completion(call('{"order":"A-1"}'), "length") }, whole);
    expect(await isRecorded(whole)).toBe(true);
  });
});

describe("chat stream integrity: single-flight followers of an unrecordable miss", () => {
  it("Should send a follower waiting on a stream that turns out unrecordable to the model, never serve it the leader's stream", async () => {
    const body = ask(uniqueModel("integrity-follow"));
    const bad = unrecordable[0][1];
    const good = `${[...text, chunk({}, "stop"), "[DONE]"].map((d) => `data: ${d}\n\n`).join("")}`;
    const real = globalThis.fetch;
    const origin = new URL(String(env.UPSTREAM_BASE_URL)).origin;
    let calls = 0;
    let open = () => undefined as void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.origin !== origin || url.pathname.startsWith("/__")) return real(input, init);
      const sse = calls++ === 0 ? bad : good;
      // The leader's upstream call waits at the gate until the follower joined its flight.
      if (calls === 1) await gate;
      return new Response(sse, { headers: { "content-type": "text/event-stream" } });
    });
    try {
      const waitingBefore = await followersWaiting();
      const leader = chat({ ...body, stream: true });
      await eventually(() => calls === 1);
      const follower = chat({ ...body, stream: true });
      await eventually(async () => (await followersWaiting()) === waitingBefore + 1);
      open();
      const [l, f] = await Promise.all([leader, follower]);
      expect(await l.text()).toBe(bad);
      expect(l.headers.get("muscle-mem-cache")).toBe("miss");
      expect(f.headers.get("muscle-mem-cache")).not.toBe("hit");
      // The model's own answer to the follower, relayed as it came.
      expect(await f.text()).toBe(good);
      expect(calls).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });
});
