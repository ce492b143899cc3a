import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { chat, uniqueModel } from "./helpers";

describe("fail open", () => {
  afterEach(async () => {
    await env.DB.exec("ALTER TABLE nodes_broken RENAME TO nodes").catch(() => undefined);
  });

  it("Should forward to the model and say bypass when D1 fails", async () => {
    await env.DB.exec("ALTER TABLE nodes RENAME TO nodes_broken");
    const res = await chat({ model: uniqueModel(), messages: [{ role: "user", content: "Refund order #A-1" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    const body = (await res.json()) as { choices: Array<{ message: { tool_calls: unknown[] } }> };
    expect(body.choices[0].message.tool_calls).toHaveLength(1);
  });
});
