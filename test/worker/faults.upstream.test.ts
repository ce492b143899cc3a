import { describe, expect, it } from "vitest";
import { eventually, uniqueModel } from "./helpers";
import { callWorker, chatRequest, faultBase, faultStats, nodesContaining, storedFor } from "./faults.support";

interface Envelope {
  error: { message: string; type: string; code: string; param: string | null };
}

const ask = (model: string, text: string, stream = false) => ({ model, stream, messages: [{ role: "user", content: text }] });

/** Nothing of this request reached D1: no tree for its model, no node holding its text. */
async function expectNothingStored(model: string, text: string): Promise<void> {
  expect(await storedFor(model)).toEqual({ trees: 0, nodes: 0 });
  expect(await nodesContaining(text)).toBe(0);
}

describe("an upstream that hangs", () => {
  for (const stream of [false, true]) {
    it(`Should cut it after UPSTREAM_TIMEOUT_MS with a 504 envelope, cancel the fetch and store nothing (stream: ${stream})`, async () => {
      const { base, tag } = faultBase("hang");
      const model = uniqueModel("hang");
      const text = `hang ${tag}`;
      const call = await callWorker(chatRequest(ask(model, text, stream)), { UPSTREAM_BASE_URL: base, UPSTREAM_TIMEOUT_MS: "300" });
      expect(call.res.status).toBe(504);
      expect(call.res.headers.get("muscle-mem-cache")).toBe("miss");
      const body = (await call.res.json()) as Envelope;
      expect(body.error).toMatchObject({ code: "upstream_timeout", type: "upstream_error" });
      expect(body.error.message).toContain("UPSTREAM_TIMEOUT_MS");
      await call.settled();
      await eventually(async () => (await faultStats(tag)).closedEarly === 1);
      await expectNothingStored(model, text);
    });
  }

  it("Should release single flight, so that the next identical request is not held behind the lost one", async () => {
    const { base, tag } = faultBase("hang");
    const model = uniqueModel("hang");
    const vars = { UPSTREAM_BASE_URL: base, UPSTREAM_TIMEOUT_MS: "200" };
    const first = await callWorker(chatRequest(ask(model, tag)), vars);
    await first.res.arrayBuffer();
    await first.settled();
    const second = await callWorker(chatRequest(ask(model, tag)), vars);
    expect(second.res.status).toBe(504);
    // It led a flight of its own (miss), rather than waiting for the failed leader and stepping aside (bypass).
    expect(second.res.headers.get("muscle-mem-cache")).toBe("miss");
    await second.settled();
    expect((await faultStats(tag)).requests).toBe(2);
  });

  it("Should pass a stream that stalls after its headers through, and record nothing when the client gives up", async () => {
    const { base, tag } = faultBase("stall");
    const model = uniqueModel("stall");
    const call = await callWorker(chatRequest(ask(model, tag, true)), { UPSTREAM_BASE_URL: base, UPSTREAM_TIMEOUT_MS: "300" });
    expect(call.res.status).toBe(200);
    expect(call.res.headers.get("muscle-mem-cache")).toBe("miss");
    const reader = (call.res.body as ReadableStream<Uint8Array>).getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("partial ans");
    await reader.cancel();
    await call.settled();
    await eventually(async () => (await faultStats(tag)).closedEarly === 1);
    await expectNothingStored(model, tag);
  });
});

describe("a client that aborts", () => {
  it("Should cancel the upstream stream and record nothing when the client cancels mid-stream", async () => {
    const { base, tag } = faultBase("drip");
    const model = uniqueModel("drip");
    const call = await callWorker(chatRequest(ask(model, tag, true)), { UPSTREAM_BASE_URL: base });
    expect(call.res.headers.get("muscle-mem-cache")).toBe("miss");
    const reader = (call.res.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes('"content":"x"')) seen += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel("client went away");
    await call.settled();
    await eventually(async () => (await faultStats(tag)).closedEarly === 1);
    expect((await faultStats(tag)).completed).toBe(0);
    await expectNothingStored(model, tag);
  });

  it("Should cancel the upstream fetch when the client aborts a non-streamed miss", async () => {
    const { base, tag } = faultBase("hang");
    const model = uniqueModel("abort");
    const controller = new AbortController();
    const pending = callWorker(chatRequest(ask(model, tag), { signal: controller.signal }), { UPSTREAM_BASE_URL: base });
    await eventually(async () => (await faultStats(tag)).requests === 1);
    controller.abort();
    const call = await pending;
    await call.res.arrayBuffer().catch(() => undefined);
    await call.settled();
    await eventually(async () => (await faultStats(tag)).closedEarly === 1);
    await expectNothingStored(model, tag);
  });
});

describe("an upstream that answers 200 with something unusable", () => {
  const cases: Array<[kind: string, stream: boolean, expected: string]> = [
    ["garbage", true, "data: {not json\n\ndata: [DONE]\n\n"],
    ["no-finish", true, '"content":"no finish reason"'],
    ["error-event", true, "overloaded mid-stream"],
    ["html", false, "<html><body>502 Bad Gateway (from a proxy in front of the model)</body></html>"],
  ];
  for (const [kind, stream, expected] of cases) {
    it(`Should relay ${kind} faithfully and store nothing`, async () => {
      const { base, tag } = faultBase(kind);
      const model = uniqueModel(kind);
      const call = await callWorker(chatRequest(ask(model, tag, stream)), { UPSTREAM_BASE_URL: base });
      expect(call.res.status).toBe(200);
      expect(call.res.headers.get("muscle-mem-cache")).toBe("miss");
      expect(await call.res.text()).toContain(expected);
      await call.settled();
      await expectNothingStored(model, tag);
    });
  }

  it("Should answer 502 upstream_unreachable when the upstream resets the connection", async () => {
    const { base, tag } = faultBase("reset");
    const model = uniqueModel("reset");
    const call = await callWorker(chatRequest(ask(model, tag)), { UPSTREAM_BASE_URL: base });
    expect(call.res.status).toBe(502);
    expect(((await call.res.json()) as Envelope).error.code).toBe("upstream_unreachable");
    await call.settled();
    await expectNothingStored(model, tag);
  });
});

describe("upstream errors on a stream, and with followers waiting", () => {
  it("Should pass a 429 on a streamed request through, with the upstream's body, and store nothing", async () => {
    const model = uniqueModel("error-429");
    const call = await callWorker(chatRequest(ask(model, "x", true)));
    expect(call.res.status).toBe(429);
    expect(await call.res.json()).toEqual({ error: { message: "scripted 429", type: "server_error", code: "upstream_429" } });
    await call.settled();
    await expectNothingStored(model, "x");
  });

  it("Should send every waiter of a failed leader to the model: all get the upstream's status, none is served a partial answer", async () => {
    const model = uniqueModel("error-503");
    const calls = await Promise.all(Array.from({ length: 5 }, () => callWorker(chatRequest(ask(model, "same question")))));
    for (const call of calls) {
      expect(call.res.status).toBe(503);
      expect(((await call.res.json()) as Envelope).error.code).toBe("upstream_503");
    }
    await Promise.all(calls.map((c) => c.settled()));
    await expectNothingStored(model, "same question");
  });
});

describe("bypasses on both APIs when the upstream is unreachable", () => {
  it("Should answer a 502 envelope that still says muscle-mem-cache: bypass, on the chat and Messages routes", async () => {
    const { base } = faultBase("reset");
    const chatCall = await callWorker(chatRequest({ model: uniqueModel("reset"), messages: [{ role: "user", content: "hi" }] }, { headers: { "cache-control": "no-store" } }), { UPSTREAM_BASE_URL: base });
    const messagesCall = await callWorker(
      new Request("http://mm.test/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "sk-ant-faults", "anthropic-version": "2023-06-01", "cache-control": "no-store" },
        body: JSON.stringify({ model: uniqueModel("reset"), max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
      }),
      { ANTHROPIC_BASE_URL: base },
    );
    for (const call of [chatCall, messagesCall]) {
      expect(call.res.status).toBe(502);
      expect(call.res.headers.get("muscle-mem-cache")).toBe("bypass");
      expect(((await call.res.json()) as Envelope).error.code).toBe("upstream_unreachable");
      await call.settled();
    }
  });
});
