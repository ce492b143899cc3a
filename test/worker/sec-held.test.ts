import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { chat, recorded, uniqueModel } from "./helpers";
import { newKey } from "./api-helpers";

/** Attacks that held when this file was written: kept so that they keep holding. */
describe("adversarial HTTP input that the Worker already handles", () => {
  it("Should never echo a request id with control characters, markup or 10 KB: a fresh UUID instead", async () => {
    for (const id of ["ab\u0001c<script>", "a".repeat(10_000), "x y", "id\u202Egpj"]) {
      const res = await chat({ model: uniqueModel(), messages: [{ role: "user", content: "hi" }] }, { headers: { "x-request-id": id } });
      await res.arrayBuffer();
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("Should answer a JSON body that is not an object with a 400 in each API's envelope, before any model call", async () => {
    const key = newKey();
    for (const body of ["[]", '"x"', "null", "1e999", "1"]) {
      const res = await chat(body, { key });
      expect([body, res.status]).toEqual([body, 400]);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
      const messages = await exports.default.fetch(
        new Request("http://mm.test/v1/messages", {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
          body,
        }),
      );
      expect([body, messages.status]).toEqual([body, 400]);
      expect(await messages.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    }
  });

  it("Should key a body with a leading BOM as the same JSON without it", async () => {
    const key = newKey();
    const body = { model: uniqueModel(), messages: [{ role: "user", content: "bom" }] };
    const first = await chat(body, { key });
    await first.arrayBuffer();
    await recorded(body, { key });
    const bom = await chat(`\uFEFF${JSON.stringify(body)}`, { key });
    await bom.arrayBuffer();
    expect(bom.headers.get("muscle-mem-cache")).toBe("hit");
  });

  it("Should not reach the API through a dot-dot or encoded-dot path from a model route without a credential", async () => {
    for (const path of ["/v1/chat/../../api/trees", "/v1/%2e%2e/api/trees"]) {
      const res = await exports.default.fetch(new Request(`http://mm.test${path}`));
      expect([path, res.status]).toEqual([path, 401]);
    }
  });
});
