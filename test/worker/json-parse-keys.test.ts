import { describe, expect, it } from "vitest";
import { chat, generations, recorded, uniqueModel } from "./helpers";

/**
 * workerd's JSON.parse can misread an object key written with an escaped quote: once an earlier object had
 * the keys "a" then "\\" (a backslash), `{"a":1,"\"":2}` parses with the key backslash, not quote. Two
 * requests that differ only there would parse to one value, key alike, and one would be served the other's
 * answer. A body with a quote in any key is never cached (src/core/exact-json.ts: `quote in a JSON key`).
 */
const body = (model: string, key: string) =>
  JSON.stringify({
    model,
    messages: [{ role: "user", content: "Which field is set?" }],
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: {}, [key]: {} } } } }],
  });

describe("a body whose keys hold an escaped quote", () => {
  it("Should never serve it the answer recorded for a body whose key is the text before that quote", async () => {
    const model = uniqueModel("quote-key");
    const backslash = body(model, "\\");
    const first = await chat(backslash);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.arrayBuffer();
    await recorded(backslash);
    const before = await generations(model);

    const quote = await chat(body(model, '"'));
    expect(quote.status).toBe(200);
    expect(quote.headers.get("muscle-mem-cache")).toBe("bypass");
    await quote.arrayBuffer();
    expect(await generations(model)).toBe(before + 1);
  });
});
