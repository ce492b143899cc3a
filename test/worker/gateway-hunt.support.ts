import { env, exports } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";

/** The four cached APIs, as a gateway in front of each is asked. */
export type Api = "chat" | "responses" | "messages" | "gemini";

/** What the gateway in front of the model sends back, byte for byte: status, headers and body. */
export interface GatewayReply {
  status?: number;
  /** Response headers; `content-type` is left out when given as null (a gateway that sends none). */
  headers?: Record<string, string | null>;
  body: string | Uint8Array<ArrayBuffer>;
}

/** The `data:` lines of an SSE body, each payload an object (JSON) or raw text; `event` names precede with `event:`. */
export function sse(events: Array<unknown | { event: string; data: unknown }>): string {
  return events
    .map((e) => {
      const named = typeof e === "object" && e !== null && "event" in e && "data" in e ? (e as { event: string; data: unknown }) : null;
      const data = named ? named.data : e;
      const text = typeof data === "string" ? data : JSON.stringify(data);
      return `${named ? `event: ${named.event}\n` : ""}data: ${text}\n\n`;
    })
    .join("");
}

/** The request each API's client sends, for `model` (JSON or streamed). */
function requestOf(api: Api, model: string, key: string, stream: boolean): Request {
  const text = "Refund order A-1.";
  const json = { "content-type": "application/json" };
  switch (api) {
    case "chat":
      return new Request("http://mm.test/v1/chat/completions", {
        method: "POST",
        headers: { ...json, authorization: `Bearer ${key}` },
        body: JSON.stringify({ model, messages: [{ role: "user", content: text }], ...(stream ? { stream: true } : {}) }),
      });
    case "responses":
      return new Request("http://mm.test/v1/responses", {
        method: "POST",
        headers: { ...json, authorization: `Bearer ${key}` },
        body: JSON.stringify({ model, input: [{ role: "user", content: text }], ...(stream ? { stream: true } : {}) }),
      });
    case "messages":
      return new Request("http://mm.test/v1/messages", {
        method: "POST",
        headers: { ...json, "x-api-key": key, "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: "user", content: text }], ...(stream ? { stream: true } : {}) }),
      });
    case "gemini": {
      const action = stream ? "streamGenerateContent?alt=sse" : "generateContent";
      return new Request(`http://mm.test/v1beta/models/${model}:${action}`, {
        method: "POST",
        headers: { ...json, "x-goog-api-key": key },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }] }),
      });
    }
  }
}

/** What the client got: status, headers and the body's bytes as text. */
export interface Got {
  status: number;
  headers: Headers;
  text: string;
  bytes: Uint8Array;
}

/**
 * Runs `fn` while every model request (POST) to the chat, Anthropic and Gemini upstreams is answered with
 * `reply`; the returned counter's `asked` counts them. Key checks (GET) and the test upstream's own routes
 * go through.
 */
async function withGateway<T>(reply: GatewayReply, counter: { asked: number }, fn: () => Promise<T>): Promise<T> {
  const real = globalThis.fetch;
  const vars = env as unknown as Record<string, string>;
  const origins = [vars.UPSTREAM_BASE_URL, vars.ANTHROPIC_BASE_URL, vars.GEMINI_BASE_URL].map((b) => new URL(b).origin);
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (!origins.includes(url.origin) || url.pathname.startsWith("/__") || request.method !== "POST") return real(input, init);
    counter.asked++;
    const headers = new Headers();
    const given = reply.headers ?? {};
    if (!("content-type" in given)) headers.set("content-type", "application/json");
    for (const [k, v] of Object.entries(given)) if (v !== null) headers.set(k, v);
    // Bytes, so that a reply with no content-type gets none (a string body would get text/plain).
    const bytes = typeof reply.body === "string" ? new TextEncoder().encode(reply.body) : reply.body;
    return new Response(bytes, { status: reply.status ?? 200, headers });
  });
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}

async function send(api: Api, model: string, key: string, stream: boolean): Promise<Got> {
  const res = await exports.default.fetch(requestOf(api, model, key, stream));
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, text: new TextDecoder().decode(bytes), bytes };
}

/**
 * Sends one request answered by `reply`, then the same request again (same reply): what the client got
 * each time and how many requests reached the upstream.
 */
export async function twice(api: Api, reply: GatewayReply, stream: boolean): Promise<{ first: Got; second: Got; asked: number }> {
  const model = uniqueModel(`gw-${api}`);
  const key = `sk-gw-${crypto.randomUUID()}`;
  const counter = { asked: 0 };
  const first = await settled(() => withGateway(reply, counter, () => send(api, model, key, stream)));
  const second = await settled(() => withGateway(reply, counter, () => send(api, model, key, stream)));
  return { first, second, asked: counter.asked };
}

/** The reply's body as the bytes the client must get. */
function bodyBytes(reply: GatewayReply): Uint8Array<ArrayBuffer> {
  return typeof reply.body === "string" ? new TextEncoder().encode(reply.body) : reply.body;
}

/**
 * Expects `reply` relayed as sent (status, body, content-type) and not recorded: the second identical request
 * is a miss that reaches the model again.
 */
export async function expectRelayedNotRecorded(api: Api, reply: GatewayReply, stream: boolean): Promise<void> {
  const { first, second, asked } = await twice(api, reply, stream);
  for (const got of [first, second]) {
    expect(got.status).toBe(reply.status ?? 200);
    expect(got.bytes).toEqual(bodyBytes(reply));
    expect(got.headers.get("muscle-mem-cache")).toBe("miss");
  }
  const type = reply.headers && "content-type" in reply.headers ? reply.headers["content-type"] : "application/json";
  expect(first.headers.get("content-type")).toBe(type);
  expect(asked).toBe(2);
}

/** Expects `reply` relayed as sent and recorded: the second identical request is a hit that never reaches the model. */
export async function expectRecorded(api: Api, reply: GatewayReply, stream: boolean): Promise<{ first: Got; second: Got }> {
  const { first, second, asked } = await twice(api, reply, stream);
  expect(first.bytes).toEqual(bodyBytes(reply));
  expect(first.headers.get("muscle-mem-cache")).toBe("miss");
  expect(second.headers.get("muscle-mem-cache")).toBe("hit");
  expect(asked).toBe(1);
  return { first, second };
}
