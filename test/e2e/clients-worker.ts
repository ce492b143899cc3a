import OpenAI from "openai";
import { afterAll, beforeAll } from "vitest";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { startClientsUpstream, type ClientsUpstream, type UpstreamCall } from "./clients-upstream";

/**
 * What the openai client checks (test/e2e/clients-openai*.test.ts) share: one `wrangler dev` in front of the
 * scripted upstream (clients-upstream.ts), an openai client of it, and the waits for what lands after a response.
 */
export interface ClientsWorker {
  readonly dev: WranglerDev;
  readonly upstream: ClientsUpstream;
  /** An openai client of the Worker with `key` (no retries unless `options` asks). */
  client: (key: string, options?: Partial<ConstructorParameters<typeof OpenAI>[0]>) => OpenAI;
  /** The calls that reached the upstream for `model`. */
  callsTo: (model: string) => UpstreamCall[];
  /** Whether the Worker holds an answer for this request: it re-asks with only-if-cached (200 only from the tree). */
  recorded: (key: string, path: string, body: unknown, search?: string) => Promise<boolean>;
  /** Waits until the answer to `body` is recorded (recording lands after the miss's response). */
  waitRecorded: (key: string, path: string, body: unknown, search?: string) => Promise<void>;
}

/** Starts the upstream and `wrangler dev` (with `vars(upstream URL)`) before the file's tests, stops them after. */
export function useClientsWorker(vars: (upstreamUrl: string) => Record<string, string>): ClientsWorker {
  let upstream: ClientsUpstream | undefined;
  let dev: WranglerDev | undefined;
  beforeAll(async () => {
    upstream = await startClientsUpstream();
    dev = await startWranglerDev({ vars: vars(upstream.url) });
  });
  afterAll(async () => {
    await dev?.stop();
    await upstream?.close();
  });
  const started = <T>(what: T | undefined): T => {
    if (!what) throw new Error("useClientsWorker: read before beforeAll started the Worker");
    return what;
  };
  const recorded = async (key: string, path: string, body: unknown, search = ""): Promise<boolean> => {
    const res = await fetch(`${started(dev).url}/v1/${path}${search}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "cache-control": "only-if-cached" },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status === 200;
  };
  return {
    get dev() {
      return started(dev);
    },
    get upstream() {
      return started(upstream);
    },
    client: (key, options = {}) => new OpenAI({ apiKey: key, baseURL: `${started(dev).url}/v1`, maxRetries: 0, ...options }),
    callsTo: (model) => started(upstream).calls.filter((c) => c.model === model),
    recorded,
    waitRecorded: async (key, path, body, search = "") => {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        if (await recorded(key, path, body, search)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the Worker did not record ${JSON.stringify(body).slice(0, 120)} in time`);
    },
  };
}

/** A tenant key of its own for each test (its own trees). */
export const freshKey = () => `sk-clients-${crypto.randomUUID().slice(0, 12)}`;

/** One user message. */
export const ask = (text: string): OpenAI.ChatCompletionMessageParam[] => [{ role: "user", content: text }];

/** Waits for `check` to hold (an upstream's view of a cancelled connection, or a recording, arrives asynchronously). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
