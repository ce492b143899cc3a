import Anthropic from "@anthropic-ai/sdk";
import { exports } from "cloudflare:workers";
import { eventually } from "./helpers";

export interface MessagesInit {
  /** The client's Anthropic key (`x-api-key`); each test uses its own to get its own tenant. */
  key?: string;
  headers?: Record<string, string>;
}

/** POSTs a Messages body to the Worker the way the Anthropic SDK does (x-api-key, anthropic-version). */
export function postMessages(body: unknown, init: MessagesInit = {}): Promise<Response> {
  return exports.default.fetch(
    new Request("http://mm.test/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": init.key ?? "sk-ant-test-default", "anthropic-version": "2023-06-01", ...init.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** Waits until the Worker has recorded an answer for the request (asks with only-if-cached). */
export async function messageRecorded(body: unknown, init: MessagesInit = {}): Promise<void> {
  await eventually(async () => {
    const res = await postMessages(body, { ...init, headers: { ...init.headers, "cache-control": "only-if-cached" } });
    await res.arrayBuffer();
    return res.status === 200;
  });
}

/** The official Anthropic SDK, talking to the Worker in this isolate; records each response's cache outcome. */
export function anthropicClient(key: string, outcomes: string[] = []): Anthropic {
  return new Anthropic({
    apiKey: key,
    baseURL: "http://mm.test",
    maxRetries: 0,
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const res = await exports.default.fetch(new Request(input, init));
      outcomes.push(res.headers.get("muscle-mem-cache") ?? "none");
      return res;
    },
  });
}

/**
 * Waits until the Worker has recorded the answer to `params`, asking through the SDK with only-if-cached: a
 * client of the same key whose outcomes are not counted, since how many asks it takes depends on when the
 * recording lands, never on what the Worker serves.
 */
export async function sdkRecorded(client: Anthropic, params: Anthropic.MessageCreateParamsNonStreaming): Promise<void> {
  const probe = anthropicClient(client.apiKey ?? "");
  await eventually(async () => {
    try {
      await probe.messages.create(params, { headers: { "cache-control": "only-if-cached" } });
      return true;
    } catch (error) {
      if (error instanceof Anthropic.APIError && error.status === 504) return false;
      throw error;
    }
  });
}

/** The refund-desk tools in Anthropic's format (tools/scripted-anthropic.ts scripts them). */
export const refundTools: Anthropic.Tool[] = [
  {
    name: "get_order",
    description: "Look up an order by id.",
    input_schema: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  },
  {
    name: "refund",
    description: "Refund an order in full.",
    input_schema: { type: "object", properties: { order_id: { type: "string" }, amount: { type: "number" } }, required: ["order_id", "amount"] },
  },
];
