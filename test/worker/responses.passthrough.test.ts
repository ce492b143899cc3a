import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { responses } from "./responses.support";

const outcomes: string[] = [];
const client = new OpenAI({
  apiKey: "sk-test-responses",
  baseURL: "http://mm.test/v1",
  maxRetries: 0,
  fetch: async (input: string | URL | Request, init?: RequestInit) => {
    const res = await exports.default.fetch(new Request(input, init));
    outcomes.push(res.headers.get("muscle-mem-cache") ?? "none");
    return res;
  },
});

describe("POST /v1/responses: what is passed through", () => {
  it("Should pass store: true through, every time (the client wants the upstream to keep it)", async () => {
    outcomes.length = 0;
    const response = await client.responses.create({ model: "echo-resp-store", input: "hello there", store: true });
    expect(response.output_text).toBe("echo: hello there");
    await client.responses.create({ model: "echo-resp-store", input: "hello there", store: true });
    expect(outcomes).toEqual(["bypass", "bypass"]);
  });

  it("Should pass a streamed previous_response_id request through event by event", async () => {
    outcomes.length = 0;
    const stream = await client.responses.create({ model: "echo-resp-prev", input: "stream me", previous_response_id: "resp_upstream1", stream: true });
    const types: string[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types.filter((t) => t === "response.output_text.delta").length).toBeGreaterThan(1);
    expect(text).toBe("echo: stream me");
    expect(outcomes).toEqual(["bypass"]);
  });

  it("Should answer only-if-cached for a request it never caches with 504 not_cached", async () => {
    const res = await responses({ model: "echo-resp-bg", input: "x", background: true }, { headers: { "cache-control": "only-if-cached" } });
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: { code: "not_cached" } });
  });

  it("Should pass a body whose numbers JSON cannot hold exactly through (its key would not be exact)", async () => {
    const res = await responses('{"model":"echo-resp-lossy","input":"x","max_output_tokens":9007199254740993}');
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    await res.arrayBuffer();
  });

  it("Should pass server-side tools and conversation objects through", async () => {
    for (const extra of [{ tools: [{ type: "web_search" }] }, { conversation: "conv_1" }]) {
      const res = await responses({ model: "echo-resp-server", input: "x", ...extra });
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
      await res.arrayBuffer();
    }
  });
});
