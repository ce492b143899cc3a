import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { fastJoins } from "../../src/engine/lookup/childless";
import { callWorker, chatRequest } from "./faults.support";
import { chat, eventually, gatedUpstream, generations, oneFlight, uniqueModel } from "./helpers";
import { gemini } from "./gemini.support";
import { postMessages } from "./messages.support";
import { responses } from "./responses.support";
import { streamedText } from "./streamed-text.support";
import { followersWaiting, settled } from "./settled";

/**
 * Real traffic at once (docs/reliability.md, "Under real traffic, hunted"): identical requests streamed on
 * every API, a leader whose client goes away mid-stream, requests that differ in one late message or in
 * their credential. Every wait is on a state (a held upstream, followers counted in the tree's object),
 * never on a duration.
 */

/**
 * `n` identical streamed requests as one single flight (like helpers' oneFlight), each body read as soon as
 * its response arrives, as a real client does: the leader's recording, which serves its followers, lands
 * only when its stream has been read to the end.
 */
async function streamedFlight(n: number, send: () => Promise<Response>): Promise<Array<{ status: number; outcome: string | null; text: string }>> {
  const read = async (pending: Promise<Response>) => {
    const r = await pending;
    return { status: r.status, outcome: r.headers.get("muscle-mem-cache"), text: streamedText(await r.text()) };
  };
  const upstream = gatedUpstream(1);
  return upstream.during(async () => {
    const before = await followersWaiting();
    const leader = read(send());
    await eventually(() => upstream.asked() === 1, 20_000);
    const followers = Array.from({ length: n - 1 }, () => read(send()));
    await eventually(async () => (await followersWaiting()) === before + n - 1, 20_000);
    upstream.open();
    return Promise.all([leader, ...followers]);
  });
}

/** The text of a JSON answer, whatever the API. */
function jsonText(body: Record<string, unknown>): string {
  const chat = (body.choices as Array<{ message: { content: string } }> | undefined)?.[0]?.message.content;
  const messages = (body.content as Array<{ text?: string }> | undefined)?.map((b) => b.text ?? "").join("");
  const responses = (body.output as Array<{ content?: Array<{ text?: string }> }> | undefined)?.flatMap((o) => o.content ?? []).map((c) => c.text ?? "");
  const gemini = (body.candidates as Array<{ content: { parts: Array<{ text?: string }> } }> | undefined)?.[0]?.content.parts.map((p) => p.text ?? "");
  return chat ?? messages ?? responses?.join("") ?? gemini?.join("") ?? "";
}

const apis: Array<{ api: string; send: (model: string, text: string, stream: boolean) => Promise<Response> }> = [
  { api: "chat", send: (model, text, stream) => chat({ model, stream, messages: [{ role: "user", content: text }] }, { key: "sk-race-stream" }) },
  {
    api: "messages",
    send: (model, text, stream) => postMessages({ model, max_tokens: 256, stream, messages: [{ role: "user", content: text }] }, { key: "sk-ant-race" }),
  },
  { api: "responses", send: (model, text, stream) => responses({ model, stream, input: text }, { key: "sk-race-resp" }) },
  { api: "gemini", send: (model, text, stream) => gemini(model, { contents: [{ role: "user", parts: [{ text }] }] }, { stream, key: "gm-race" }) },
];

describe("identical misses at once", () => {
  for (const { api, send } of apis) {
    it(`Should serve every follower of a streamed ${api} miss the leader's exact answer`, async () => {
      const model = uniqueModel("echo-race");
      const text = `Refund order #R-${crypto.randomUUID().slice(0, 6)}`;
      const got = await settled(() => streamedFlight(4, () => send(model, text, true)));
      expect(got.map((g) => g.status)).toEqual([200, 200, 200, 200]);
      expect(got.map((g) => g.outcome)).toEqual(["miss", "hit", "hit", "hit"]);
      expect(got[0].text.length).toBeGreaterThan(0);
      for (const g of got) expect(g.text).toBe(got[0].text);
    });

    it(`Should serve every follower of a JSON ${api} miss the leader's exact answer`, async () => {
      const model = uniqueModel("echo-race");
      const text = `Refund order #J-${crypto.randomUUID().slice(0, 6)}`;
      const got = await settled(async () => {
        const all = await oneFlight(4, () => send(model, text, false));
        return Promise.all(
          all.map(async (r) => ({ status: r.status, outcome: r.headers.get("muscle-mem-cache"), text: jsonText((await r.json()) as Record<string, unknown>) })),
        );
      });
      expect(got.map((g) => g.status)).toEqual([200, 200, 200, 200]);
      expect(got.map((g) => g.outcome)).toEqual(["miss", "hit", "hit", "hit"]);
      expect(got[0].text.length).toBeGreaterThan(0);
      for (const g of got) expect(g.text).toBe(got[0].text);
    });
  }
});

describe("a leader whose client goes away mid-stream", () => {
  it("Should send its followers to the model themselves, record nothing partial, and leave a clean flight", async () => {
    const model = uniqueModel("echo-abort");
    const text = `${"a long answer to cut ".repeat(40)}${crypto.randomUUID()}`;
    const body = { model, stream: true, messages: [{ role: "user", content: text }] };
    const key = "sk-race-abort";
    const upstream = gatedUpstream(1);
    const { leaderSeen, followers } = await settled(() =>
      upstream.during(async () => {
        const before = await followersWaiting();
        const leader = chat(body, { key });
        await eventually(() => upstream.asked() === 1);
        const waiting = Array.from({ length: 3 }, () => chat(body, { key }));
        await eventually(async () => (await followersWaiting()) === before + 3);
        upstream.open();
        // The leader's client reads the first chunk and hangs up.
        const res = await leader;
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const first = new TextDecoder().decode((await reader.read()).value);
        await reader.cancel("client went away");
        const followers = await Promise.all(
          waiting.map(async (r) => {
            const res = await r;
            return { outcome: res.headers.get("muscle-mem-cache"), text: streamedText(await res.text()) };
          }),
        );
        return { leaderSeen: first, followers };
      }),
    );
    expect(leaderSeen).toContain("data:");
    // The followers asked the model themselves (not served a cut answer, not held until the lease ran out:
    // SINGLE_FLIGHT_WAIT_MS is 120 s, past this test's timeout) and got all of it.
    for (const f of followers) {
      expect(f.outcome).toBe("miss");
      expect(f.text).toBe(`echo: ${text}`);
    }
    expect(await generations(model)).toBe(4);
    // Only the followers' whole answer is stored (one node, observed by each), never the leader's cut one.
    const stored = await env.DB.prepare("SELECT message, observations FROM nodes WHERE instr(message, ?1) > 0 AND role = 'assistant'")
      .bind(text)
      .all<{ message: string; observations: number }>();
    expect(stored.results.map((r) => [(JSON.parse(r.message) as { content: string }).content, r.observations])).toEqual([[`echo: ${text}`, 3]]);
    // The next identical request is served that whole answer.
    const next = await settled(async () => {
      const res = await chat(body, { key });
      return { outcome: res.headers.get("muscle-mem-cache"), text: streamedText(await res.text()) };
    });
    expect(next).toEqual({ outcome: "hit", text: `echo: ${text}` });
    expect(await generations(model)).toBe(4);
  });
});

interface Completion {
  choices: Array<{ message: { content: string | null } }>;
}

describe("requests that differ late, at once", () => {
  it("Should answer each of N requests differing only in their last message with its own answer, at once and when replayed at once", async () => {
    const model = uniqueModel("echo-late");
    const prefix = [
      { role: "system", content: "You are a refund desk." },
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi, how can I help?" },
    ];
    const texts = Array.from({ length: 8 }, (_, i) => `refund order #${i}-${crypto.randomUUID().slice(0, 4)}`);
    const send = (t: string) => chat({ model, messages: [...prefix, { role: "user", content: t }] }, { key: "sk-race-late" });
    const round = () =>
      settled(async () => {
        const upstream = gatedUpstream(texts.length);
        return upstream.during(async () => {
          const all = texts.map(send);
          // Each leads its own flight: all are held at the model at once.
          await eventually(() => upstream.asked() === texts.length);
          upstream.open();
          return Promise.all(
            all.map(async (pending) => {
              const r = await pending;
              return { outcome: r.headers.get("muscle-mem-cache"), said: ((await r.json()) as Completion).choices[0].message.content };
            }),
          );
        });
      });
    const first = await round();
    expect(first.map((f) => f.said)).toEqual(texts.map((t) => `echo: ${t}`));
    expect(first.every((f) => f.outcome === "miss")).toBe(true);
    const again = await settled(() => Promise.all(texts.map(async (t) => ((await (await send(t)).json()) as Completion).choices[0].message.content)));
    expect(again).toEqual(texts.map((t) => `echo: ${t}`));
    expect(await generations(model)).toBe(texts.length);
  });

  it("Should answer N different next turns of a just-recorded leaf (fast misses) at once, each with its own answer, streamed and JSON", async () => {
    const model = uniqueModel("echo-fast");
    const key = "sk-race-fast";
    // The hot-cache bound long (so the leaf this isolate recorded is known childless) and the colo layer off, as in fast-miss.test.ts.
    const vars = { HOT_CACHE_TTL_MS: "10000", COLO_CACHE_TTL_MS: "0" };
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    try {
      const turn = [{ role: "user", content: `first turn ${crypto.randomUUID()}` }];
      const first = await callWorker(chatRequest({ model, messages: turn }, { key }), vars);
      const answer = ((await first.res.json()) as Completion).choices[0].message;
      await first.settled();
      const prefix = [...turn, answer];
      const texts = Array.from({ length: 6 }, (_, i) => `next ${i} ${crypto.randomUUID().slice(0, 4)}`);
      const send = (t: string, i: number) =>
        callWorker(chatRequest({ model, stream: i % 2 === 0, messages: [...prefix, { role: "user", content: t }] }, { key }), vars);
      const said = async (r: Response, i: number) => (i % 2 === 0 ? streamedText(await r.text()) : ((await r.json()) as Completion).choices[0].message.content);
      const before = fastJoins().leader;
      const upstream = gatedUpstream(texts.length);
      const calls = await upstream.during(async () => {
        const all = texts.map(send);
        // Every one is at the model at once, each forwarded with no lookup before it.
        await eventually(() => upstream.asked() === texts.length);
        upstream.open();
        return Promise.all(all);
      });
      const first6 = await Promise.all(calls.map(async (c, i) => [c.res.headers.get("muscle-mem-cache"), await said(c.res, i)]));
      await Promise.all(calls.map((c) => c.settled()));
      expect(first6).toEqual(texts.map((t) => ["miss", `echo: ${t}`]));
      expect(fastJoins().leader - before).toBe(texts.length);
      const again = await Promise.all(
        texts.map(async (t, i) => {
          const c = await send(t, i);
          const out = [c.res.headers.get("muscle-mem-cache"), await said(c.res, i)];
          await c.settled();
          return out;
        }),
      );
      expect(again).toEqual(texts.map((t) => ["hit", `echo: ${t}`]));
      expect(await generations(model)).toBe(texts.length + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("Should answer the same request from N tenants at once each from its own flight, never another tenant's", async () => {
    const model = uniqueModel("fresh-tenants");
    const body = { model, messages: [{ role: "user", content: "Give me a fresh answer" }] };
    const keys = Array.from({ length: 6 }, (_, i) => `sk-race-tenant-${i}-${crypto.randomUUID().slice(0, 4)}`);
    const first = await settled(async () => {
      const upstream = gatedUpstream(keys.length);
      return upstream.during(async () => {
        const all = keys.map((key) => chat(body, { key }));
        // Every tenant leads its own flight: all are held at the model at once.
        await eventually(() => upstream.asked() === keys.length);
        upstream.open();
        return Promise.all(all.map(async (r) => ((await (await r).json()) as Completion).choices[0].message.content));
      });
    });
    expect(new Set(first).size).toBe(keys.length);
    const again = await settled(() =>
      Promise.all(keys.map(async (key) => ((await (await chat(body, { key })).json()) as Completion).choices[0].message.content)),
    );
    expect(again).toEqual(first);
    expect(await generations(model)).toBe(keys.length);
  });
});

describe("a huge request racing small ones", () => {
  it("Should answer a body just under MAX_BODY_BYTES and 10 small requests sent beside it, each with its own answer, none a 500", {
    timeout: 60_000,
  }, async () => {
    const small = uniqueModel("echo-small");
    const huge = uniqueModel("fresh-huge");
    // 32 MiB is MAX_BODY_BYTES: one message of text just under it, with the JSON around it.
    const text = "x".repeat(32 * 1024 * 1024 - 1024);
    const got = await settled(async () => {
      const big = chat({ model: huge, messages: [{ role: "user", content: text }] }, { key: "sk-race-huge" });
      const smalls = Array.from({ length: 10 }, (_, i) => chat({ model: small, messages: [{ role: "user", content: `small ${i}` }] }, { key: "sk-race-huge" }));
      return Promise.all(
        [big, ...smalls].map(async (pending) => {
          const r = await pending;
          return [r.status, ((await r.json()) as Completion).choices[0].message.content] as const;
        }),
      );
    });
    expect(got[0][0]).toBe(200);
    expect(got[0][1]).toMatch(/^fresh /);
    expect(got.slice(1)).toEqual(Array.from({ length: 10 }, (_, i) => [200, `echo: small ${i}`]));
  });
});
