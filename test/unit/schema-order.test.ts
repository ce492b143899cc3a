import { describe, expect, it } from "vitest";
import { bypassReason, frameJsonOf, frameOf } from "../../src/core/frame";
import type { ChatRequest } from "../../src/core/messages";
import { INTEGER_PROPERTY, ORDER_KEY, propertyOrders } from "../../src/core/schema-order";
import { anthropicBypassReason, anthropicFrameJsonOf } from "../../src/providers/anthropic/frame";
import type { MessagesRequest } from "../../src/providers/anthropic/schema";

/** The order of a structured output schema's properties, keyed (src/core/schema-order.ts). */

const schema = (properties: Record<string, unknown>) => ({ type: "object", properties });
const chatBody = (s: unknown, extra: Record<string, unknown> = {}) =>
  ({
    model: "m",
    messages: [{ role: "user", content: "x" }],
    response_format: { type: "json_schema", json_schema: { name: "v", schema: s } },
    ...extra,
  }) as ChatRequest;

describe("propertyOrders", () => {
  it("Should name each properties object out of sorted order by its pointer, nested ones too, and nothing else", () => {
    const value = schema({ b: schema({ d: {}, c: {} }), a: { type: "array", items: schema({ y: {}, x: {} }) } });
    expect(propertyOrders(value, "/s")).toEqual({
      orders: { "/s/properties": ["b", "a"], "/s/properties/b/properties": ["d", "c"], "/s/properties/a/items/properties": ["y", "x"] },
      ambiguous: false,
    });
    expect(propertyOrders(schema({ a: {}, b: schema({ c: {} }) }), "/s")).toEqual({ orders: {}, ambiguous: false });
    // Only property maps: any other object's key order is not read.
    expect(propertyOrders({ type: "object", description: "d" }, "/s").orders).toEqual({});
    expect(propertyOrders(schema({ "a/b": {}, "a~": {}, a: {} }), "").orders).toEqual({ "/properties": ["a/b", "a~", "a"] });
  });

  it("Should call a property map with an array-index-like name ambiguous (JSON.parse moves those first)", () => {
    expect(propertyOrders(schema({ b: {}, 1: {} }), "").ambiguous).toBe(true);
    expect(propertyOrders(schema({ 1: {} }), "").ambiguous).toBe(false);
    expect(propertyOrders(schema({ "01": {}, a: {} }), "").ambiguous).toBe(false);
  });
});

describe("the frame keys a structured output schema's property order", () => {
  it("Should key a chat response_format in another property order apart, and a sorted one as before", () => {
    const ab = chatBody(schema({ answer: {}, reasoning: {} }));
    const ba = chatBody(schema({ reasoning: {}, answer: {} }));
    expect(frameJsonOf(ab)).not.toBe(frameJsonOf(ba));
    expect(frameJsonOf(ab)).not.toContain(ORDER_KEY);
    expect(frameOf(ba)[ORDER_KEY]).toEqual({ "/response_format/json_schema/schema/properties": ["reasoning", "answer"] });
  });

  it("Should not key the order of tool parameters (a call's arguments are keyed as one call in any key order)", () => {
    const tool = (p: Record<string, unknown>) => [{ type: "function", function: { name: "f", parameters: schema(p) } }];
    const body = (p: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "x" }], tools: tool(p) }) as ChatRequest;
    expect(frameJsonOf(body({ b: {}, a: {} }))).toBe(frameJsonOf(body({ a: {}, b: {} })));
  });

  it("Should key an imported frame (schema sorted, the order beside it) as the live request it was exported from", () => {
    const live = frameOf(chatBody(schema({ reasoning: {}, answer: {} })));
    const exported = chatBody(schema({ answer: {}, reasoning: {} }), { [ORDER_KEY]: live[ORDER_KEY] });
    expect(frameJsonOf(exported)).toBe(frameJsonOf(chatBody(schema({ reasoning: {}, answer: {} }))));
  });

  it("Should bypass a schema whose property order JSON.parse loses, on chat and Messages", () => {
    expect(bypassReason(chatBody(schema({ b: {}, 2: {} })))).toBe(INTEGER_PROPERTY);
    expect(bypassReason(chatBody(schema({ b: {}, a: {} })))).toBeNull();
    const messages = (s: unknown) =>
      ({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }], output_format: { type: "json_schema", schema: s } }) as MessagesRequest;
    expect(anthropicBypassReason(messages(schema({ b: {}, 2: {} })))).toBe(INTEGER_PROPERTY);
    const headers = new Headers();
    expect(anthropicFrameJsonOf(messages(schema({ b: {}, a: {} })), headers)).not.toBe(anthropicFrameJsonOf(messages(schema({ a: {}, b: {} })), headers));
  });
});
