import { describe, expect, it } from "vitest";
import { chat, recorded, uniqueModel } from "./helpers";
import { onlyIfCached, served } from "./key-hunt.support";

/**
 * Wrong replays hunted in declared bindings (`muscle-mem-bindings`): request A is recorded with bindings,
 * then B, which differs from A only in what the model reads, must not be served A's answer (only-if-cached).
 */

const bindings = (values: Record<string, string>) => ({ "muscle-mem-bindings": JSON.stringify(values) });

describe("declared hunt: number spellings in a declared request's messages are keyed", () => {
  it("Should not serve a declared answer recorded for a message field whose number is written otherwise (1 vs 1.0)", async () => {
    const model = uniqueModel("echo");
    const init = { key: "sk-hdecl-numbers", headers: bindings({ name: "Ada Lovelace" }) };
    const raw = (weight: string) => `{"model":"${model}","messages":[{"role":"user","content":"rank it for Ada Lovelace","weight":${weight}}]}`;
    await (await chat(raw("1"), init)).arrayBuffer();
    await recorded(raw("1"), init);
    // The same text with the same binding is an exact repeat.
    expect(await served(await chat(raw("1"), { ...init, headers: { ...init.headers, ...onlyIfCached } }))).toBe(true);
    expect(await served(await chat(raw("1.0"), { ...init, headers: { ...init.headers, ...onlyIfCached } }))).toBe(false);
  });
});

describe("declared hunt: number spellings inside a declared request's tool-call arguments are keyed", () => {
  const raw = (model: string, qty: string) =>
    JSON.stringify({
      model,
      messages: [
        { role: "user", content: "order for Ada Lovelace" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "order", arguments: `{"qty":${qty}}` } }] },
        { role: "tool", tool_call_id: "call_1", content: "placed for Ada Lovelace" },
      ],
    });

  it("Should not serve a declared answer recorded for arguments whose number is written otherwise (1 vs 1.0)", async () => {
    const model = uniqueModel("echo");
    const init = { key: "sk-hdecl-args", headers: bindings({ name: "Ada Lovelace" }) };
    await (await chat(raw(model, "1"), init)).arrayBuffer();
    await recorded(raw(model, "1"), init);
    expect(await served(await chat(raw(model, "1"), { ...init, headers: { ...init.headers, ...onlyIfCached } }))).toBe(true);
    // The concrete key reads `1.0` as its own text (docs/reliability.md); the declared key parsed it to 1.
    expect(await served(await chat(raw(model, "1.0"), { ...init, headers: { ...init.headers, ...onlyIfCached } }))).toBe(false);
  });

  it("Should not serve a declared answer recorded for a bound number written otherwise in the arguments (1999 vs 1999.0)", async () => {
    const model = uniqueModel("echo");
    const init = { key: "sk-hdecl-args-bound", headers: bindings({ name: "Ada Lovelace", qty: "1999" }) };
    await (await chat(raw(model, "1999"), init)).arrayBuffer();
    await recorded(raw(model, "1999"), init);
    expect(await served(await chat(raw(model, "1999"), { ...init, headers: { ...init.headers, ...onlyIfCached } }))).toBe(true);
    expect(await served(await chat(raw(model, "1999.0"), { ...init, headers: { ...init.headers, ...onlyIfCached } }))).toBe(false);
  });
});
