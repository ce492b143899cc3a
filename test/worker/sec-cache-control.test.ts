import { describe, expect, it } from "vitest";
import { chat, recorded, uniqueModel } from "./helpers";
import { newKey } from "./api-helpers";

async function outcome(res: Response): Promise<string | null> {
  await res.arrayBuffer();
  return res.headers.get("muscle-mem-cache");
}

describe("cache-control spelled oddly still means what the client asked", () => {
  it("Should record nothing for no-store with a value or a stray semicolon", async () => {
    for (const value of ['no-store="x"', "no-store;", "private, NO-STORE=1"]) {
      const key = newKey();
      const body = { model: uniqueModel(), messages: [{ role: "user", content: "hello" }] };
      expect([value, await outcome(await chat(body, { key, headers: { "cache-control": value } }))]).toEqual([value, "bypass"]);
      const after = await chat(body, { key, headers: { "cache-control": "only-if-cached" } });
      expect([value, after.status]).toEqual([value, 504]);
      await after.arrayBuffer();
    }
  });

  it("Should ask the model, never the tree, for an HTTP/1.0 pragma: no-cache", async () => {
    const key = newKey();
    const body = { model: uniqueModel(), messages: [{ role: "user", content: "hello" }] };
    expect(await outcome(await chat(body, { key }))).toBe("miss");
    await recorded(body, { key });
    // A cache-control header takes precedence over pragma (RFC 9111 §5.4).
    expect(await outcome(await chat(body, { key, headers: { pragma: "no-cache", "cache-control": "max-stale" } }))).toBe("hit");
    expect(await outcome(await chat(body, { key, headers: { pragma: "no-cache" } }))).toBe("miss");
    expect(await outcome(await chat(body, { key, headers: { "cache-control": "no-cache=foo" } }))).toBe("miss");
  });
});
