import { describe, expect, it } from "vitest";
import { BINDINGS_NOT_DECLARED } from "../../src/engine/template-hook";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";
import { APIS, ORDERS, upstreamCalls } from "./templates-apis.support";

/**
 * Declared variables on Responses (docs/templates.md, "Which APIs"): the `muscle-mem-bindings` header is not read
 * there (a served id would resolve, through `previous_response_id`, to placeholder messages), so each miss says so
 * in `muscle-mem-template-miss`, and the request is keyed with its values as sent. Anthropic Messages and native
 * Gemini read them through their views: test/worker/templates-apis.declared.test.ts.
 */
const notDeclared = Object.keys(APIS).filter((n) => !APIS[n].declared);

describe.each(notDeclared)("declared variables on %s (not used there: the client is told)", (name) => {
  const apiOf = APIS[name];
  it("Should key the request with its values as sent and say on the miss that muscle-mem-bindings was not used; the same request then hits exactly", async () => {
    const key = newKey();
    const model = uniqueModel(`bind-${name}`);
    const bindings = { "muscle-mem-bindings": JSON.stringify({ order_id: ORDERS[0][0], email: ORDERS[0][1] }) };
    const first = await settled(() => apiOf.send(key, model, ORDERS[0][0], ORDERS[0][1], bindings));
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    expect(first.headers.get("muscle-mem-template-miss")).toBe(BINDINGS_NOT_DECLARED);
    await first.arrayBuffer();
    const other = await settled(() => apiOf.send(key, model, ORDERS[1][0], ORDERS[1][1], bindings));
    expect([other.headers.get("muscle-mem-cache"), other.headers.get("muscle-mem-template")]).toEqual(["miss", null]);
    expect(apiOf.call(await other.json())).toEqual({ name: "get_order", args: { order_id: ORDERS[1][0], email: ORDERS[1][1] } });
    const again = await apiOf.send(key, model, ORDERS[0][0], ORDERS[0][1], bindings);
    expect([again.headers.get("muscle-mem-cache"), again.headers.get("muscle-mem-template-miss")]).toEqual(["hit", null]);
    expect(apiOf.call(await again.json())).toEqual({ name: "get_order", args: { order_id: ORDERS[0][0], email: ORDERS[0][1] } });
    expect(upstreamCalls()).toBe(2);
  });
});
