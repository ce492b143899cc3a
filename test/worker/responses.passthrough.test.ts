import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";

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

describe("POST /v1/responses (pass-through)", () => {
  it("Should pass a Responses request through to the upstream and back", async () => {
    outcomes.length = 0;
    const response = await client.responses.create({ model: "gpt-resp", input: "hello there" });
    expect(response.output_text).toBe("echo: hello there");
    expect(response.status).toBe("completed");
    expect(outcomes).toEqual(["bypass"]);
  });

  it("Should pass a streamed Responses request through event by event", async () => {
    outcomes.length = 0;
    const stream = await client.responses.create({ model: "gpt-resp", input: "stream me", stream: true });
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

  it("Should not serve Responses from the cache: only-if-cached still goes upstream", async () => {
    const res = await exports.default.fetch(
      new Request("http://mm.test/v1/responses", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-test-responses", "cache-control": "only-if-cached" },
        body: JSON.stringify({ model: "gpt-resp", input: "hello there" }),
      }),
    );
    // The pass-through does not read cache controls: it forwards, and says so.
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(((await res.json()) as { output: unknown[] }).output).toHaveLength(1);
  });
});
