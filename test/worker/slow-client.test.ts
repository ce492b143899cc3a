import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { chat, eventually, gatedUpstream, generations, uniqueModel } from "./helpers";
import { followersWaiting, settled } from "./settled";
import { callWorker, chatRequest } from "./faults.support";
import { gemini } from "./gemini.support";
import { postMessages } from "./messages.support";
import { responses } from "./responses.support";
import { streamedText } from "./streamed-text.support";

/**
 * A streamed leader whose client keeps its connection and stops reading (docs/reliability.md, "Under real
 * traffic, hunted"): the Worker reads the model's stream at the model's pace, so the flight's followers are
 * served when the model finishes, whatever the leader's client does. Every wait is on a state (the upstream held
 * at a gate, followers counted in the tree's object), never on a duration.
 */

async function answerRows(text: string): Promise<Array<[string, number]>> {
  const rows = await env.DB.prepare("SELECT message, observations FROM nodes WHERE instr(message, ?1) > 0 AND role = 'assistant'")
    .bind(text)
    .all<{ message: string; observations: number }>();
  return rows.results.map((r) => [(JSON.parse(r.message) as { content: string }).content, r.observations]);
}

/**
 * Sends a streamed leader (held at the upstream's gate until `followers` identical requests wait on its flight),
 * lets the model answer, and has the leader's client read one chunk and never read again (nor cancel).
 */
async function stalledLeaderFlight(
  send: () => Promise<{ res: Response; settled: () => Promise<void> }>,
  followers: number,
): Promise<{ leader: Response; first: string; others: Array<{ outcome: string | null; text: string }>; settle: () => Promise<void> }> {
  const upstream = gatedUpstream(1);
  return upstream.during(async () => {
    const before = await followersWaiting();
    const leaderCall = send();
    await eventually(() => upstream.asked() === 1, 20_000);
    const waiting = Array.from({ length: followers }, () => send());
    await eventually(async () => (await followersWaiting()) === before + followers, 20_000);
    upstream.open();
    const leader = await leaderCall;
    const reader = (leader.res.body as ReadableStream<Uint8Array>).getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    // The leader's client stops here: it keeps the stream open, never reads again and never cancels.
    const others = await Promise.all(
      waiting.map(async (pending) => {
        const { res } = await pending;
        return { outcome: res.headers.get("muscle-mem-cache"), text: streamedText(await res.text()) };
      }),
    );
    const settle = async () => {
      await Promise.all(waiting.map(async (pending) => (await pending).settled()));
      // Only now, so that the test leaves no open stream behind: the followers were served before it.
      await reader.cancel("test over");
      await leader.settled();
    };
    return { leader: leader.res, first, others, settle };
  });
}

describe("a streamed leader whose client stops reading after its first chunk", () => {
  it("Should serve both identical followers the whole answer when the model finishes, record it once, and hit next", async () => {
    const model = uniqueModel("echo-slow-client");
    const text = `${"read me slowly ".repeat(30)}${crypto.randomUUID()}`;
    const body = { model, stream: true, messages: [{ role: "user", content: text }] };
    const key = "sk-slow-client";
    const flight = await stalledLeaderFlight(() => callWorker(chatRequest(body, { key }), {}), 2);
    await flight.settle();
    expect(flight.leader.headers.get("muscle-mem-cache")).toBe("miss");
    expect(flight.first).toContain("data:");
    // Served from the leader's recording (not held until SINGLE_FLIGHT_WAIT_MS, 120 s: past this test's timeout).
    expect(flight.others).toEqual([
      { outcome: "hit", text: `echo: ${text}` },
      { outcome: "hit", text: `echo: ${text}` },
    ]);
    expect(await generations(model)).toBe(1);
    // Recorded once: one node, observed once (the followers were served it, not recording it again).
    expect(await answerRows(text)).toEqual([[`echo: ${text}`, 1]]);
    const next = await settled(async () => {
      const res = await chat(body, { key });
      return { outcome: res.headers.get("muscle-mem-cache"), text: streamedText(await res.text()) };
    });
    expect(next).toEqual({ outcome: "hit", text: `echo: ${text}` });
    expect(await generations(model)).toBe(1);
  });
});

describe("a streamed leader whose client stops reading, with an answer larger than the read-ahead bound", () => {
  it("Should stop recording past MAX_CACHEABLE_MESSAGE_BYTES of unread stream and send the followers to the model at once", async () => {
    const model = uniqueModel("echo-slow-bound");
    const text = `${"a longer answer ".repeat(60)}${crypto.randomUUID()}`;
    const body = { model, stream: true, messages: [{ role: "user", content: text }] };
    const key = "sk-slow-bound";
    // Large enough to store the message and its ~1 KB answer, smaller than the ~20 KB of SSE the model streams for it.
    const vars = { MAX_CACHEABLE_MESSAGE_BYTES: "4000" };
    const flight = await stalledLeaderFlight(() => callWorker(chatRequest(body, { key }), vars), 2);
    await flight.settle();
    expect(flight.leader.headers.get("muscle-mem-cache")).toBe("miss");
    // Released, not held: each follower asked the model itself and got the whole answer.
    expect(flight.others).toEqual([
      { outcome: "miss", text: `echo: ${text}` },
      { outcome: "miss", text: `echo: ${text}` },
    ]);
    expect(await generations(model)).toBe(3);
    // The leader's answer was not recorded; the followers' were (the same answer: one node, two observations).
    expect(await answerRows(text)).toEqual([[`echo: ${text}`, 2]]);
  });
});

const apis: Array<{ api: string; send: (model: string, text: string) => Promise<Response> }> = [
  {
    api: "messages",
    send: (model, text) => postMessages({ model, max_tokens: 256, stream: true, messages: [{ role: "user", content: text }] }, { key: "sk-ant-slow" }),
  },
  { api: "responses", send: (model, text) => responses({ model, stream: true, input: text }, { key: "sk-slow-resp" }) },
  { api: "gemini", send: (model, text) => gemini(model, { contents: [{ role: "user", parts: [{ text }] }] }, { stream: true, key: "gm-slow" }) },
];

describe("a streamed leader whose client stops reading, on every other API", () => {
  for (const { api, send } of apis) {
    it(`Should serve the ${api} followers the leader's whole answer when the model finishes`, async () => {
      const model = uniqueModel("echo-slow");
      const text = `Refund order #S-${crypto.randomUUID().slice(0, 6)}`;
      const responded = async () => ({ res: await send(model, text), settled: async () => undefined });
      const flight = await settled(async () => {
        const f = await stalledLeaderFlight(responded, 2);
        await f.settle();
        return f;
      });
      expect(flight.leader.headers.get("muscle-mem-cache")).toBe("miss");
      expect(flight.others.map((o) => o.outcome)).toEqual(["hit", "hit"]);
      expect(flight.others[0].text).toContain(text);
      expect(flight.others[1].text).toBe(flight.others[0].text);
    });
  }
});
