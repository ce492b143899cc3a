import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { eventsOf, recordedResponse, responses } from "./responses.support";

/**
 * The API echoes the request's `previous_response_id` in the response (null when the request had none). A
 * request whose id the Worker served is resolved into its whole conversation before keying, so the hit is
 * rendered for a body without the id: it must still say the id the client sent, as the API would.
 */
const model = () => `echo-prevecho-${crypto.randomUUID().slice(0, 8)}`;
const key = "sk-prev-echo";

function client(): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: "http://mm.test/v1", maxRetries: 0, fetch: (input, init) => exports.default.fetch(new Request(input, init)) });
}

/** Records `body` and returns the id of a served response to it. */
async function servedId(body: { model: string; input: string }): Promise<string> {
  await (await responses(body, { key })).arrayBuffer();
  await recordedResponse(body, { key });
  const hit = await responses(body, { key });
  expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
  return ((await hit.json()) as { id: string }).id;
}

describe("Responses hits echo the request's previous_response_id", () => {
  it("Should say the id the client sent on a JSON and a streamed hit of a resolved request, and null without one", async () => {
    const m = model();
    const id = await servedId({ model: m, input: "hello" });
    const next = { model: m, previous_response_id: id, input: "and again" };
    await (await responses(next, { key })).arrayBuffer();
    await recordedResponse(
      {
        model: m,
        input: [
          { role: "user", content: "hello" },
          { role: "assistant", content: "echo: hello" },
          { role: "user", content: "and again" },
        ],
      },
      { key },
    );

    const hit = await client().responses.create(next).withResponse();
    expect(hit.response.headers.get("muscle-mem-cache")).toBe("hit");
    expect(hit.data.previous_response_id).toBe(id);

    const streamed = await responses({ ...next, stream: true }, { key });
    expect(streamed.headers.get("muscle-mem-cache")).toBe("hit");
    const events = eventsOf(await streamed.text()) as Array<{ type: string; response?: { previous_response_id: unknown } }>;
    for (const event of events.filter((e) => e.response)) expect(event.response?.previous_response_id).toBe(id);

    const plain = await client().responses.create({ model: m, input: "hello" });
    expect(plain.previous_response_id).toBeNull();
  });
});
