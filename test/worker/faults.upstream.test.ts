import { describe, expect, it, vi } from "vitest";
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
    const chatCall = await callWorker(
      chatRequest({ model: uniqueModel("reset"), messages: [{ role: "user", content: "hi" }] }, { headers: { "cache-control": "no-store" } }),
      { UPSTREAM_BASE_URL: base },
    );
    const messagesCall = await callWorker(
      new Request("http://mm.test/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "sk-ant-faults", "anthropic-version": "2023-06-01", "cache-control": "no-store" },
        body: JSON.stringify({ model: uniqueModel("reset"), max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
      }),
      { ANTHROPIC_BASE_URL: base },
    );
    for (const [call, setting] of [
      [chatCall, "UPSTREAM_BASE_URL"],
      [messagesCall, "ANTHROPIC_BASE_URL"],
    ] as const) {
      expect(call.res.status).toBe(502);
      expect(call.res.headers.get("muscle-mem-cache")).toBe("bypass");
      const { error } = (await call.res.json()) as Envelope;
      expect(call.res.headers.get("muscle-mem-error")).toBe("upstream_unreachable");
      // Each route in its API's envelope: OpenAI's code, Anthropic's error type.
      if (setting === "UPSTREAM_BASE_URL") expect(error.code).toBe("upstream_unreachable");
      else expect(error.type).toBe("api_error");
      // The host and the var that sets it; never the base URL's path.
      expect(error.message).toContain(new URL(base).host);
      expect(error.message).toContain(setting);
      expect(error.message).not.toContain("__fault");
      await call.settled();
    }
  });

  it("Should log one line naming the host and the var for an unreachable upstream, with no stack, path or query secret", async () => {
    const { base } = faultBase("reset");
    const lines: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    try {
      const call = await callWorker(
        new Request("http://mm.test/v1/models?key=AIza-query-secret", { headers: { authorization: "Bearer sk-unreachable-secret" } }),
        { UPSTREAM_BASE_URL: base },
      );
      expect(call.res.status).toBe(502);
      // A pass-through route says what the cache did, as the cached routes do.
      expect(call.res.headers.get("muscle-mem-cache")).toBe("bypass");
      await call.res.arrayBuffer();
      await call.settled();
    } finally {
      spy.mockRestore();
    }
    const unreachable = lines.filter((l) => l.includes("upstream_unreachable"));
    expect(unreachable).toHaveLength(1);
    expect(JSON.parse(unreachable[0])).toMatchObject({ event: "upstream_unreachable", host: `http://${new URL(base).host}`, var: "UPSTREAM_BASE_URL" });
    const all = lines.join("\n");
    expect(all).not.toMatch(/\n\s+at /);
    expect(all).not.toContain("AIza-query-secret");
    expect(all).not.toContain("sk-unreachable-secret");
    expect(all).not.toContain("__fault");
  });
});

describe("an upstream answer cut after its headers", () => {
  // A follower of a leaked claim waits SINGLE_FLIGHT_WAIT_MS, then steps aside (`bypass`); a released claim lets the retry lead (`miss`).
  const vars = (base: string) => ({ UPSTREAM_BASE_URL: base, SINGLE_FLIGHT_WAIT_MS: "400" });

  it("Should answer a cut JSON body with a 502 envelope, store nothing, and let an immediate identical retry lead", async () => {
    const { base, tag } = faultBase("cut-json");
    const model = uniqueModel("cut");
    const first = await callWorker(chatRequest(ask(model, tag)), vars(base));
    expect(first.res.status).toBe(502);
    expect(first.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(((await first.res.json()) as Envelope).error).toMatchObject({ code: "upstream_incomplete", type: "upstream_error" });
    await first.settled();
    const retry = await callWorker(chatRequest(ask(model, tag)), vars(base));
    expect(retry.res.status).toBe(502);
    expect(retry.res.headers.get("muscle-mem-cache")).toBe("miss");
    await retry.res.arrayBuffer();
    await retry.settled();
    expect((await faultStats(tag)).requests).toBe(2);
    await expectNothingStored(model, tag);
  });

  it("Should send concurrent identical requests to the model when their leader's body is cut, none held or served a partial answer", async () => {
    const { base, tag } = faultBase("cut-json");
    const model = uniqueModel("cut");
    const calls = await Promise.all(Array.from({ length: 3 }, () => callWorker(chatRequest(ask(model, tag)), vars(base))));
    for (const call of calls) {
      expect(call.res.status).toBe(502);
      expect(call.res.headers.get("muscle-mem-cache")).not.toBe("hit");
      await call.res.arrayBuffer();
    }
    await Promise.all(calls.map((c) => c.settled()));
    const retry = await callWorker(chatRequest(ask(model, tag)), vars(base));
    expect(retry.res.headers.get("muscle-mem-cache")).toBe("miss");
    await retry.res.arrayBuffer();
    await retry.settled();
    await expectNothingStored(model, tag);
  });

  it("Should release the claim when the client aborts while a JSON body is still arriving", async () => {
    const { base, tag } = faultBase("stall-json");
    const model = uniqueModel("stall-json");
    const controller = new AbortController();
    // The abort comes once the upstream's headers have reached the Worker: its body is still arriving (it stalls after the first bytes).
    const real = globalThis.fetch;
    let answered = false;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const res = await real(input, init);
      if ((input instanceof Request ? input.url : String(input)).startsWith(base)) answered = true;
      return res;
    });
    const pending = callWorker(chatRequest(ask(model, tag), { signal: controller.signal }), vars(base));
    try {
      await eventually(() => answered);
    } finally {
      spy.mockRestore();
    }
    controller.abort();
    const first = await pending;
    await first.res.arrayBuffer().catch(() => undefined);
    await first.settled();
    await eventually(async () => (await faultStats(tag)).closedEarly === 1);
    const cut = faultBase("cut-json", tag);
    const retry = await callWorker(chatRequest(ask(model, tag)), vars(cut.base));
    expect(retry.res.headers.get("muscle-mem-cache")).toBe("miss");
    await retry.res.arrayBuffer();
    await retry.settled();
    await expectNothingStored(model, tag);
  });

  it("Should answer a cut Anthropic JSON body with a 502 envelope and let the retry lead", async () => {
    const { base, tag } = faultBase("cut-json");
    const model = uniqueModel("cut");
    const request = () =>
      new Request("http://mm.test/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "sk-ant-faults", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: "user", content: tag }] }),
      });
    const first = await callWorker(request(), { ANTHROPIC_BASE_URL: base, SINGLE_FLIGHT_WAIT_MS: "400" });
    expect(first.res.status).toBe(502);
    await first.res.arrayBuffer();
    await first.settled();
    const retry = await callWorker(request(), { ANTHROPIC_BASE_URL: base, SINGLE_FLIGHT_WAIT_MS: "400" });
    expect(retry.res.headers.get("muscle-mem-cache")).toBe("miss");
    await retry.res.arrayBuffer();
    await retry.settled();
  });
});
