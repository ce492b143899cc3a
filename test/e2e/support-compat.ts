import { expect, it } from "vitest";
import { anthropicRefundDesk, startScriptedAnthropic, type ScriptedAnthropic } from "../../tools/scripted-anthropic";
import { refundDeskScript } from "../../tools/refund-desk";
import { startScriptedModel, type ScriptedModel } from "../../tools/scripted-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

/** A running Worker with a scripted OpenAI upstream and a scripted Anthropic upstream. */
export interface CompatWorld {
  dev: WranglerDev;
  openai: ScriptedModel;
  anthropic: ScriptedAnthropic;
  stop: () => Promise<void>;
}

/** Starts both scripted refund-desk models on loopback and one `wrangler dev` in front of them. */
export async function startCompatWorld(): Promise<CompatWorld> {
  const openai = await startScriptedModel({ script: refundDeskScript });
  const anthropic = await startScriptedAnthropic({ script: anthropicRefundDesk });
  const dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: openai.url, ANTHROPIC_BASE_URL: anthropic.url } });
  return {
    dev,
    openai,
    anthropic,
    stop: async () => {
      await dev.stop();
      await openai.close();
      await anthropic.close();
    },
  };
}

/** One model call as the client sent it, and what the cache did. */
export interface Exchange {
  url: string;
  headers: Record<string, string>;
  body: string;
  outcome: string;
}

/** A fetch that logs every model call (POST …/chat/completions or …/messages) with its cache outcome. */
export function trackingFetch(log: Exchange[]): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const body = request.method === "POST" ? await request.clone().text() : "";
    const response = await fetch(request);
    if (request.method === "POST" && /\/(chat\/completions|messages)$/.test(new URL(request.url).pathname)) {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => (headers[key] = value));
      log.push({ url: request.url, headers, body, outcome: response.headers.get("muscle-mem-cache") ?? "none" });
    }
    return response;
  };
}

/** Waits until the Worker recorded the answer to `exchange`, by re-asking it with only-if-cached. */
export async function waitRecorded(exchange: Exchange, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await fetch(exchange.url, { method: "POST", headers: { ...exchange.headers, "cache-control": "only-if-cached" }, body: exchange.body });
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the Worker did not record the run in time");
}

/** The refund desk's tools as plain functions that record what they did. */
export class Desk {
  readonly effects: string[] = [];

  constructor(
    private readonly status: string,
    private readonly amount = 42.5,
  ) {}

  getOrder(orderId: string): string {
    this.effects.push(`get_order ${orderId}`);
    return JSON.stringify({ order_id: orderId, status: this.status, amount: this.amount });
  }

  refund(orderId: string, amount: number): string {
    this.effects.push(`refund ${orderId} ${amount}`);
    return JSON.stringify({ order_id: orderId, refunded: true });
  }
}

/** The JSON schemas of the desk's tools (OpenAI `parameters`, Anthropic `input_schema`). */
export const GET_ORDER_SCHEMA = { type: "object" as const, properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false };
export const REFUND_SCHEMA = {
  type: "object" as const,
  properties: { order_id: { type: "string" }, amount: { type: "number" } },
  required: ["order_id", "amount"],
  additionalProperties: false,
};

/** The user's request every run starts with. */
export const PROMPT = "Please refund order #A-1.";

/** Runs one client's tool-calling agent to its final text, with `fetch` for every HTTP call. */
export type Runner = (opts: { key: string; stream: boolean; desk: Desk; fetch: typeof fetch }) => Promise<string>;

interface Run {
  outcomes: string[];
  effects: string[];
  final: string;
  exchanges: Exchange[];
}

async function runOnce(runner: Runner, key: string, stream: boolean, status: string): Promise<Run> {
  const exchanges: Exchange[] = [];
  const desk = new Desk(status);
  const final = await runner({ key, stream, desk, fetch: trackingFetch(exchanges) });
  return { outcomes: exchanges.map((e) => e.outcome), effects: desk.effects, final, exchanges };
}

/**
 * Registers one row of the compatibility matrix: for JSON and for streams, a
 * multi-turn tool-calling run that misses, the same run again that hits on
 * every turn with identical tool effects and no upstream generation, and a
 * branch when a tool result changes (the first turn hits, the next misses).
 */
export function matrixRow(row: string, world: () => CompatWorld, api: "openai" | "anthropic", runner: Runner): void {
  for (const stream of [false, true]) {
    it(`${row} (stream: ${stream}): misses, hits on repeat with identical tool effects, branches on a changed tool result`, async () => {
      const upstream = () => (api === "openai" ? world().openai.generations() : world().anthropic.generations());
      const key = `sk-${row.replace(/\W+/g, "-")}-${stream}-${crypto.randomUUID().slice(0, 8)}`;
      const before = upstream();
      const first = await runOnce(runner, key, stream, "delivered");
      expect(first.outcomes).toEqual(["miss", "miss", "miss"]);
      expect(first.effects).toEqual(["get_order A-1", "refund A-1 42.5"]);
      expect(first.final).toContain("refunded");
      expect(upstream() - before).toBe(3);
      await waitRecorded(first.exchanges[first.exchanges.length - 1]);

      const repeat = await runOnce(runner, key, stream, "delivered");
      expect(repeat.outcomes).toEqual(["hit", "hit", "hit"]);
      expect(repeat.effects).toEqual(first.effects);
      expect(repeat.final).toBe(first.final);
      expect(upstream() - before).toBe(3);

      const branch = await runOnce(runner, key, stream, "shipped");
      expect(branch.outcomes).toEqual(["hit", "miss"]);
      expect(branch.effects).toEqual(["get_order A-1"]);
      expect(branch.final).toContain("shipped");
      expect(upstream() - before).toBe(4);
    });
  }
}
