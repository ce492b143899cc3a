import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantOfRequest } from "../../src/core/credential";
import { CREDENTIALS } from "../../src/providers";
import { keyMessagesRequest } from "../../src/providers/anthropic/key";
import { childHash } from "../../src/core/hash";
import { generations, uniqueModel } from "./helpers";
import { postMessages } from "./messages.support";

/** What the one cached flow gives /v1/messages as it gives every API (issue 15: it used to drift from chat). */
const ask = (model: string, text: string) => ({ model, max_tokens: 64, messages: [{ role: "user", content: text }] });

describe("POST /v1/messages on the one cached flow", () => {
  it("Should say server-timing phases on a miss and on a hit", async () => {
    const model = uniqueModel("a");
    const body = ask(model, "timing please");
    const miss = await postMessages(body, { key: "sk-ant-timing" });
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    expect(miss.headers.get("server-timing")).toMatch(/parse;dur=\d+, lookup;dur=\d+, claim;dur=\d+/);
    await miss.arrayBuffer();
    // Served as a single-flight follower (recent answer) or from the store: either way a hit with its phases.
    const hit = await postMessages(body, { key: "sk-ant-timing" });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    expect(hit.headers.get("server-timing")).toMatch(/parse;dur=\d+, lookup;dur=\d+/);
    await hit.arrayBuffer();
  });

  it("Should ask the model again (a miss, not a bypass) when the tree's answer cannot be rendered as a message", async () => {
    const model = uniqueModel("a");
    const body = ask(model, "render me");
    const key = "sk-ant-unrenderable";
    const headers = new Headers({ "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" });
    const tenant = tenantOfRequest(headers, new URL("http://mm.test/v1/messages"), false, CREDENTIALS) ?? "";
    const keyed = keyMessagesRequest(body as Parameters<typeof keyMessagesRequest>[0], headers, tenant, "default");
    if (!keyed.ok) throw new Error("the request should be keyed");
    // A node whose message is not an Anthropic message (chat-shaped content): recorded, and remembered by single flight.
    const json = JSON.stringify({ role: "assistant", content: "not a message" });
    const writer = env.TREE_WRITER.get(env.TREE_WRITER.idFromName(keyed.key.treeId));
    const k = keyed.key;
    await writer.record(
      {
        treeId: k.treeId,
        tenant: k.tenant,
        namespace: k.namespace,
        model: k.model,
        frameJson: k.frameJson,
        path: k.path,
        answer: {
          hash: childHash(k.key, json),
          parent: k.key,
          role: "assistant",
          json,
          finishReason: "end_turn",
          promptTokens: 1,
          completionTokens: 1,
          latencyMs: 1,
        },
      },
      k.key,
    );
    const res = await postMessages(body, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
    const message = (await res.json()) as { type: string; content: Array<{ type: string }> };
    expect(message.type).toBe("message");
    expect(await generations(model)).toBe(1);
  });
});
