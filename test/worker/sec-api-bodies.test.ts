import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN, api } from "./api-helpers";

const PRUNE = { min_hits: 1_000_000, dry_run: true };

async function gzip(text: string): Promise<ArrayBuffer> {
  return new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
}

async function code(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe("the API's JSON bodies are read like the model routes' bodies: bounded, typed, decoded", () => {
  it("Should refuse a body past 64 KB with 413 as it arrives, not parse it whole", async () => {
    const res = await api("/prune", { method: "POST", body: { ...PRUNE, pad: "x".repeat(200_000) } });
    expect(res.status).toBe(413);
    expect(await code(res)).toBe("body_too_large");
    const declared = await api("/prune", { method: "POST", body: PRUNE, headers: { "content-length": String(10 * 1024 * 1024) } });
    expect(declared.status).toBe(413);
  });

  it("Should refuse a body that says it is not JSON (text/plain, a form) with 415", async () => {
    const res = await api("/prune", { method: "POST", body: JSON.stringify(PRUNE), headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(415);
    expect(await code(res)).toBe("unsupported_media_type");
    const move = await api("/trees/0123456789abcdef0123456789abcdef/move", {
      method: "POST",
      body: JSON.stringify({ to: "DB" }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(move.status).toBe(415);
  });

  it("Should read a gzip body as the JSON it holds, and refuse one that is not gzip with a 400", async () => {
    const res = await exports.default.fetch(
      new Request("http://mm.test/api/prune", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json", "content-encoding": "gzip" },
        body: await gzip(JSON.stringify(PRUNE)),
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ dry_run: true });
    const junk = await api("/prune", { method: "POST", body: PRUNE, headers: { "content-encoding": "gzip" } });
    expect(junk.status).toBe(400);
    expect(await code(junk)).toBe("invalid_json");
  });
});
