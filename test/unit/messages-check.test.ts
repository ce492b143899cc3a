import { describe, expect, it } from "vitest";
import tauBench from "../fixtures/workloads/tau_bench.jsonl?raw";
import { parseJsonText } from "../../src/core/body";
import { ApiError } from "../../src/core/errors";
import { chatRequest } from "../../src/core/messages";
import { isPlainChatRequest } from "../../src/core/messages-check";

/**
 * The shallow check of a chat body (src/core/messages-check.ts) passes only bodies zod accepts, and
 * zod's output for them equals the body as parsed: on the shipped workloads' requests and on every one
 * of them broken field by field (each field the schema reads set to each wrong kind of value).
 */

const lines = tauBench
  .split("\n")
  .filter(Boolean)
  .slice(0, 12)
  .map((l) => JSON.parse(l) as { model: string; tools: unknown[] | null; messages: Array<Record<string, unknown>> });
const bodies = lines.map((l) => ({ model: l.model, ...(l.tools ? { tools: l.tools } : {}), messages: l.messages }));

const VALUES: unknown[] = [undefined, null, "", "x", 0, 1, -1, 1.5, true, [], [{}], [{ type: 1 }], [{ type: "text", text: "t" }], {}, { type: "function" }];
const TOP_FIELDS = ["model", "messages", "stream", "stream_options", "n", "logprobs", "top_logprobs", "modalities", "tools"];
const MESSAGE_FIELDS = ["role", "content", "name", "refusal", "tool_calls", "function_call", "tool_call_id"];

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Every body broken in one place: a top field, a message's field, a tool call's field, a part. */
function* variants(): Generator<unknown> {
  for (const body of bodies) {
    yield body;
    for (const field of TOP_FIELDS) for (const value of VALUES) yield { ...clone(body), [field]: value };
    yield { ...clone(body), stream_options: { include_usage: "yes" } };
    for (let i = 0; i < body.messages.length; i += 3) {
      for (const field of MESSAGE_FIELDS) {
        for (const value of VALUES) {
          const broken = clone(body);
          broken.messages[i] = { ...broken.messages[i], [field]: value };
          yield broken;
        }
      }
      const call = (body.messages[i].tool_calls as Array<Record<string, unknown>> | undefined)?.[0];
      if (call) {
        for (const [field, value] of [
          ["id", ""],
          ["id", 3],
          ["type", "custom"],
          ["type", null],
          ["function", null],
          ["function", { name: "f" }],
          ["function", { name: 1, arguments: "{}" }],
        ] as const) {
          const broken = clone(body);
          (broken.messages[i].tool_calls as Array<Record<string, unknown>>)[0] = { ...call, [field]: value };
          yield broken;
        }
      }
    }
  }
}

describe("isPlainChatRequest", () => {
  it("passes the workloads' requests, whose zod output equals them", () => {
    for (const body of bodies) {
      expect(isPlainChatRequest(body)).toBe(true);
      expect(chatRequest.parse(body)).toEqual(body);
    }
  });

  it("passes no body that zod refuses, and for those it passes zod outputs the body as parsed", () => {
    let compared = 0;
    let refused = 0;
    for (const body of variants()) {
      const zod = chatRequest.safeParse(body);
      if (!zod.success) refused++;
      if (isPlainChatRequest(body)) {
        expect(zod.success, JSON.stringify(body).slice(0, 300)).toBe(true);
        expect(zod.data).toEqual(body);
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(3000);
    expect(refused).toBeGreaterThan(1000);
  });

  it("leaves every refusal to zod: parseJsonText's 400 names zod's issue", () => {
    const body = { ...bodies[0], messages: [{ role: "tool", content: "x", tool_call_id: "" }] };
    expect(() => parseJsonText(JSON.stringify(body), chatRequest)).toThrow(ApiError);
    expect(() => parseJsonText(JSON.stringify({ ...bodies[0], model: "" }), chatRequest)).toThrow("'model': model must be a non-empty string");
  });
});
