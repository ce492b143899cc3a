import { describe, expect, it } from "vitest";
import { frameApi } from "../../src/core/protocol";
import { frameDivergence } from "../../src/engine/explain/explanation";

/** The pure side of a new tree's nearest tree (docs/api.md, "Why it missed"): only trees of the request's API count. */

const chat = (model: string) => JSON.stringify({ model });
const responses = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ "muscle-mem:api": "openai-responses", model, ...extra });
const messages = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ "muscle-mem:api": "anthropic", model, ...extra });

describe("frameDivergence across APIs", () => {
  const trees = [
    { id: "chat", model: "m", frame: chat("m") },
    { id: "resp", model: "m", frame: responses("m", { temperature: 0.5, top_p: 0.9, max_output_tokens: 64 }) },
    { id: "msgs", model: "m", frame: messages("m", { max_tokens: 256, temperature: 0 }) },
  ];

  it("Should pick the nearest tree among the request's API only, even when another API's is nearer", () => {
    const f = frameDivergence(responses("m", { instructions: "Be brief." }), trees);
    expect(f).toMatchObject({ nearest_tree: "resp", field: "instructions", trees_compared: 1 });
    expect(frameDivergence(chat("m2"), trees)).toMatchObject({ nearest_tree: "chat", field: "model", trees_compared: 1 });
  });

  it("Should give no nearest tree when the tenant has no tree of the request's API", () => {
    const f = frameDivergence(JSON.stringify({ "muscle-mem:api": "gemini", model: "m" }), trees);
    expect(f).toEqual({ nearest_tree: null, nearest_model: null, field: null, diff: null, trees_compared: 0 });
  });

  it("Should read a frame's API, null for chat and for a frame that is not JSON", () => {
    expect([frameApi(responses("m")), frameApi(chat("m")), frameApi("not json"), frameApi('{"muscle-mem:api":3}')]).toEqual([
      "openai-responses",
      null,
      null,
      null,
    ]);
  });
});
