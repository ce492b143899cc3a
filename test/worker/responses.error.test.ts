import { describe, expect, it } from "vitest";
import { responses } from "./responses.support";

describe("POST /v1/responses: bad input", () => {
  it("Should answer malformed JSON with a 400 in OpenAI's error envelope", async () => {
    const res = await responses("{not json");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { message: "The request body is not valid JSON.", type: "invalid_request_error", code: "invalid_json", param: null },
    });
  });

  it("Should answer a wrong shape with a 400 that names the field, and store nothing", async () => {
    const body = { model: "echo-bad", input: 42 };
    const res = await responses(body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_request", param: "input" } });
    const call = {
      model: "echo-bad",
      input: [
        { role: "user", content: "x" },
        { type: "function_call", name: "f", arguments: "{}" },
      ],
    };
    const noCallId = await responses(call);
    expect(noCallId.status).toBe(400);
    expect(await noCallId.json()).toMatchObject({ error: { code: "invalid_request", param: "input[1]" } });
    expect((await responses(call, { headers: { "cache-control": "only-if-cached" } })).status).toBe(400);
    // Bad input is bad input without a key too: it is answered, never forwarded.
    expect((await responses(call, { key: null })).status).toBe(400);
  });

  it("Should answer a malformed namespace with a 400", async () => {
    const res = await responses({ model: "echo-bad", input: "x" }, { headers: { "muscle-mem-namespace": "bad name!" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { param: "muscle-mem-namespace" } });
  });
});
