import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { placement } from "../../src/store/objects/tree-objects";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";

const withLocations = (value: string) => ({ ...env, D1_SHARD_LOCATIONS: value }) as unknown as Env;

describe("tree objects placed next to their shard's primary", () => {
  it("Should give a tree's object its shard primary's location hint, and none when unset or invalid", () => {
    expect(placement(withLocations("DB=weur"), "tree-1")).toEqual({ locationHint: "weur" });
    expect(placement(withLocations("DB_9=enam"), "tree-1")).toBeUndefined();
    expect(placement(withLocations(""), "tree-1")).toBeUndefined();
    expect(placement(withLocations("DB=nowhere"), "tree-1")).toBeUndefined();
    // The shard the directory names wins over the hash rule's.
    expect(placement(withLocations("DB=weur,DB_1=apac"), "tree-1", "DB_1")).toEqual({ locationHint: "apac" });
  });

  it("Should record and serve through an object created with a location hint", async () => {
    const vars = withLocations("DB=enam");
    const body = JSON.stringify({ model: uniqueModel("placed"), messages: [{ role: "user", content: `placed ${crypto.randomUUID()}` }] });
    const key = newKey();
    const call = async (headers: Record<string, string> = {}) => {
      const ctx = createExecutionContext();
      const req = new Request("http://mm.test/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
        body,
      });
      const res = await worker.fetch(req, vars, ctx);
      await res.arrayBuffer();
      await waitOnExecutionContext(ctx);
      return res;
    };
    expect((await call()).headers.get("muscle-mem-cache")).toBe("miss");
    expect((await call()).headers.get("muscle-mem-cache")).toBe("hit");
  });
});
