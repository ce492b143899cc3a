import { describe, expect, it } from "vitest";
import { recordedResponse, responses } from "./responses.support";

const model = () => `echo-prev-${crypto.randomUUID().slice(0, 8)}`;

/** Serves `body` once from the model and once from the tree; the id of the served response. */
async function servedId(body: unknown, key?: string): Promise<string> {
  await (await responses(body, { key })).arrayBuffer();
  await recordedResponse(body, { key });
  const hit = await responses(body, { key });
  expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
  return ((await hit.json()) as { id: string }).id;
}

describe("POST /v1/responses with previous_response_id", () => {
  it("Should resolve an id the Worker served from the tree, key the whole conversation, and record it as such", async () => {
    const m = model();
    const id = await servedId({ model: m, input: "hello" });
    const next = await responses({ model: m, previous_response_id: id, input: [{ role: "user", content: "and again" }] });
    expect(next.headers.get("muscle-mem-cache")).toBe("miss");
    expect(((await next.json()) as { output: Array<{ content: Array<{ text: string }> }> }).output[0].content[0].text).toBe("echo: and again");
    // The same conversation sent whole is the node the resolved request recorded.
    const whole = {
      model: m,
      input: [
        { role: "user", content: "hello" },
        { role: "assistant", content: "echo: hello" },
        { role: "user", content: "and again" },
      ],
    };
    await recordedResponse(whole);
    const again = await responses({ model: m, previous_response_id: id, input: "and again" });
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    await again.arrayBuffer();
  });

  it("Should pass an id the Worker did not serve, or another tenant's, through", async () => {
    const upstreamId = await responses({ model: model(), previous_response_id: "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b", input: "x" });
    expect(upstreamId.headers.get("muscle-mem-cache")).toBe("bypass");
    await upstreamId.arrayBuffer();
    const m = model();
    const id = await servedId({ model: m, input: "private" }, "sk-prev-owner");
    const stranger = await responses({ model: m, previous_response_id: id, input: "and then" }, { key: "sk-prev-stranger" });
    expect(stranger.headers.get("muscle-mem-cache")).toBe("bypass");
    await stranger.arrayBuffer();
  });
});
