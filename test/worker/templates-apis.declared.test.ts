import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { api as mmApi, newKey, ok, onlyTree } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { APIS as DESK, FOURTH, ORDERS, SYSTEM, TOOL, upstreamCalls, userText } from "./templates-apis.support";

/**
 * Declared variables (`muscle-mem-bindings`) on Anthropic Messages and native Gemini, read through their template
 * views (src/cache/templates/view-declared.ts; docs/templates.md, "Declared variables"): the refund desk's request
 * keyed with placeholders, its answer stored with them, served to other values once two bindings got it alike.
 */
type Fields = Record<string, unknown>;

interface DeclaredApi {
  send(key: string, model: string, order: string, email: string, opts?: { stream?: boolean; fields?: Fields }): Promise<Response>;
  /** The model's answer with `extra` blocks or parts before its call (what it says around the call). */
  reply(args: Fields, extra: Fields[]): Fields;
  /** The path of the upstream call the reply answers. */
  upstream: RegExp;
  /** An answer block or part holding `text` where no placeholder goes. */
  aside(text: string): Fields;
}

const post = (path: string, headers: Record<string, string>, body: unknown) =>
  exports.default.fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
  );
const bindings = (order: string, email: string) => ({ "muscle-mem-bindings": JSON.stringify({ order_id: order, email }) });

const APIS: Record<string, DeclaredApi> = {
  anthropic: {
    send: (key, model, order, email, opts = {}) =>
      post(
        "/v1/messages",
        { "x-api-key": key, "anthropic-version": "2023-06-01", ...bindings(order, email) },
        {
          model,
          max_tokens: 1024,
          system: SYSTEM,
          tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.parameters }],
          messages: [{ role: "user", content: userText(order, email) }],
          ...(opts.stream ? { stream: true } : {}),
          ...opts.fields,
        },
      ),
    reply: (args, extra) => ({
      id: "msg_x",
      type: "message",
      role: "assistant",
      model: "m",
      content: [...extra, { type: "tool_use", id: "toolu_x", name: "get_order", input: args }],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    }),
    upstream: /\/messages$/,
    aside: (text) => ({ type: "thinking", thinking: `The customer is ${text}.`, signature: "sig" }),
  },
  gemini: {
    send: (key, model, order, email, opts = {}) =>
      post(
        `/v1beta/models/${model}:${opts.stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
        { "x-goog-api-key": key, ...bindings(order, email) },
        {
          systemInstruction: { parts: [{ text: SYSTEM }] },
          tools: [{ functionDeclarations: [TOOL] }],
          contents: [{ role: "user", parts: [{ text: userText(order, email) }] }],
          ...opts.fields,
        },
      ),
    reply: (args, extra) => ({
      candidates: [{ content: { role: "model", parts: [...extra, { functionCall: { name: "get_order", args } }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    }),
    upstream: /:generateContent$/,
    aside: (text) => ({ text: `The customer is ${text}.`, thought: true }),
  },
};

/** The upstream calls answer with `extra` before the model's call (the support's scripted model otherwise); returns how many were made. */
function saying(api: DeclaredApi, extra: (args: { order_id: string; email: string }) => Fields[]): () => number {
  let calls = 0;
  const scripted = vi.mocked(globalThis.fetch).getMockImplementation();
  vi.mocked(globalThis.fetch).mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.method !== "POST" || !api.upstream.test(new URL(request.url).pathname)) return (scripted ?? fetch)(input, init);
    const [, order_id, email] = /refund order (\S+), my email is (\S+)\./.exec(await request.text()) ?? [];
    calls++;
    return Response.json(api.reply({ order_id, email }, extra({ order_id, email })));
  });
  return () => calls;
}

/** A request sent and its body read, with what the Worker left behind settled (a recording). */
const asked = (api: DeclaredApi, ...args: Parameters<DeclaredApi["send"]>) => settled(async () => served(await api.send(...args)));

const served = async (res: Response) => ({
  cache: res.headers.get("muscle-mem-cache"),
  template: res.headers.get("muscle-mem-template"),
  text: await res.text(),
});

describe.each(Object.keys(APIS))("declared variables on %s", (name) => {
  const api = APIS[name];

  it("Should serve a third binding its own values, JSON and streamed, once two bindings got the same answer", async () => {
    const [key, model] = [newKey(), uniqueModel(`decl-${name}`)];
    for (const [order, email] of ORDERS.slice(0, 2)) expect((await asked(api, key, model, order, email)).cache).toBe("miss");
    const json = await served(await api.send(key, model, FOURTH[0], FOURTH[1]));
    expect([json.cache, json.template]).toEqual(["hit", "declared"]);
    expect(JSON.parse(json.text)).toMatchObject({}); // a JSON body
    expect([json.text.includes(FOURTH[0]), json.text.includes(FOURTH[1]), json.text.includes(ORDERS[0][0]), json.text.includes(ORDERS[1][1])]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const streamed = await api.send(key, model, ORDERS[2][0], ORDERS[2][1], { stream: true });
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    const sse = await served(streamed);
    expect([
      sse.cache,
      sse.template,
      sse.text.includes(ORDERS[2][0]),
      sse.text.includes(ORDERS[2][1].replace("@", "\\u0040")) || sse.text.includes(ORDERS[2][1]),
    ]).toEqual(["hit", "declared", true, true]);
    expect(sse.text.includes(ORDERS[0][0]) || sse.text.includes(FOURTH[0])).toBe(false);
    expect(upstreamCalls()).toBe(2);
  });

  it("Should never serve one binding's answer to another before a second binding confirmed it", async () => {
    const [key, model] = [newKey(), uniqueModel(`decl1-${name}`)];
    expect((await asked(api, key, model, ORDERS[0][0], ORDERS[0][1])).cache).toBe("miss");
    const other = await settled(() => api.send(key, model, ORDERS[1][0], ORDERS[1][1]));
    expect([other.headers.get("muscle-mem-cache"), other.headers.get("muscle-mem-template-miss")]).toEqual([
      "miss",
      "declared answer not yet confirmed: 1 of 2 bindings",
    ]);
    expect((await other.text()).includes(ORDERS[1][0])).toBe(true);
    // Its own binding is an exact repeat of its recording.
    const again = await served(await api.send(key, model, ORDERS[0][0], ORDERS[0][1]));
    expect([again.cache, again.template, again.text.includes(ORDERS[0][0])]).toEqual(["hit", "declared", true]);
    expect(upstreamCalls()).toBe(2);
  });

  it("Should not store an answer holding a bound value where no placeholder goes, and count it as another answer", async () => {
    const [key, model] = [newKey(), uniqueModel(`decl-aside-${name}`)];
    let aside = true;
    const calls = saying(api, (args) => (aside ? [api.aside(args.email)] : []));
    expect((await asked(api, key, model, ORDERS[0][0], ORDERS[0][1])).cache).toBe("miss");
    // Not stored: its own repeat goes to the model again (a stored one would serve the first customer's email to others).
    expect((await asked(api, key, model, ORDERS[0][0], ORDERS[0][1])).cache).toBe("miss");
    expect(calls()).toBe(2);
    // Two other bindings then get the plain answer: the model answered this node two ways, so it serves no new values.
    aside = false;
    for (const [order, email] of ORDERS.slice(1)) expect((await asked(api, key, model, order, email)).cache).toBe("miss");
    const fourth = await settled(() => api.send(key, model, FOURTH[0], FOURTH[1]));
    expect([fourth.headers.get("muscle-mem-cache"), fourth.headers.get("muscle-mem-template-miss")]).toEqual([
      "miss",
      "declared answer: the model answered this node two ways for two bindings",
    ]);
    await fourth.arrayBuffer();
  });

  it("Should not serve other values where the request's stop sequence would have stopped the model", async () => {
    const [key, model] = [newKey(), uniqueModel(`decl-stop-${name}`)];
    const fields = name === "anthropic" ? { stop_sequences: ["D-40"] } : { generationConfig: { stopSequences: ["D-40"] } };
    for (const [order, email] of ORDERS.slice(0, 2)) expect((await asked(api, key, model, order, email, { fields })).cache).toBe("miss");
    const stopped = await settled(() => api.send(key, model, FOURTH[0], FOURTH[1], { fields }));
    expect(stopped.headers.get("muscle-mem-cache")).toBe("miss");
    expect(stopped.headers.get("muscle-mem-template-miss")).toContain('stop sequence "D-40"');
    await stopped.arrayBuffer();
    const third = await served(await api.send(key, model, ORDERS[2][0], ORDERS[2][1], { fields }));
    expect([third.cache, third.template]).toEqual(["hit", "declared"]);
    expect(upstreamCalls()).toBe(3);
  });

  it("Should serve a template learned inside the declared tree with the request's own values (an order id left undeclared, the email declared)", async () => {
    const [key, model] = [newKey(), uniqueModel(`decl-learn-${name}`)];
    const onlyEmail = (email: string) => ({ "muscle-mem-bindings": JSON.stringify({ email }) });
    await settled(async () => {
      for (const [order, email] of ORDERS) expect((await served(await DESK[name].send(key, model, order, email, onlyEmail(email)))).cache).toBe("miss");
    });
    await learningRan();
    const tree = (await onlyTree(key)).id;
    // The one tree is the declared one: its nodes hold the email's placeholder, never an email.
    const stored = await env.DB.prepare("SELECT message FROM nodes WHERE tree_id = ?1").bind(tree).all<{ message: string }>();
    expect([
      stored.results.length,
      stored.results.filter((n) => n.message.includes("{{email}}")).length,
      stored.results.some((n) => n.message.includes("@")),
    ]).toEqual([6, 6, false]);
    // The learner's writes land in its alarm: poll the tree's templates (no request to the model meanwhile).
    let confirmed: string | undefined;
    await eventually(async () => {
      const page = await ok<{ data: Array<{ id: string; confirmed: boolean }> }>(mmApi(`/trees/${tree}/templates`, { token: key }));
      confirmed = page.data.find((t) => t.confirmed)?.id;
      return confirmed !== undefined;
    });
    const res = await DESK[name].send(key, model, FOURTH[0], FOURTH[1], onlyEmail(FOURTH[1]));
    expect([res.headers.get("muscle-mem-cache"), res.headers.get("muscle-mem-template")]).toEqual(["hit", confirmed]);
    expect(DESK[name].call(await res.json())).toEqual({ name: "get_order", args: { order_id: FOURTH[0], email: FOURTH[1] } });
    expect(upstreamCalls()).toBe(3);
  });
});
