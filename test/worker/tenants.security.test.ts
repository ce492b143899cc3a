import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { api } from "./api-helpers";
import { chat, recorded, uniqueModel } from "./helpers";

/** What a response reveals, apart from the body a model wrote: status, header names, cache outcome. */
async function shape(res: Response): Promise<{ status: number; outcome: string | null; headers: string[]; error: unknown }> {
  const text = await res.text();
  const headers = [...res.headers.keys()].filter((h) => h !== "muscle-mem-node").sort();
  let error: unknown = null;
  try {
    error = (JSON.parse(text) as { error?: unknown }).error ?? null;
  } catch {
    error = null;
  }
  return { status: res.status, outcome: res.headers.get("muscle-mem-cache"), headers, error };
}

const keyArb = fc.string({ minLength: 1, maxLength: 40, unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-_".split("")) }).map((s) => `sk-${s}`);

describe("tenants through the proxy", () => {
  it("Should never serve one random key's recorded path to another random key", { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(keyArb, keyArb).filter(([a, b]) => a !== b),
        async ([owner, other]) => {
          const body = { model: uniqueModel("echo"), messages: [{ role: "user", content: `secret plan of ${owner}` }] };
          await (await chat(body, { key: owner })).arrayBuffer();
          await recorded(body, { key: owner });
          const probe = await chat(body, { key: other, headers: { "cache-control": "only-if-cached" } });
          expect(probe.status).toBe(504);
          await probe.arrayBuffer();
          const asked = await chat(body, { key: other });
          expect(asked.headers.get("muscle-mem-cache")).toBe("miss");
          await asked.arrayBuffer();
        },
      ),
      { numRuns: 8, seed: 6 },
    );
  });

  it("Should not be an oracle: another key learns the same about a path that exists and one that never did", async () => {
    const model = uniqueModel("echo");
    const known = { model, messages: [{ role: "user", content: "does tenant A have this path?" }] };
    const unknown = { model, messages: [{ role: "user", content: "a path nobody ever asked" }] };
    await (await chat(known, { key: "sk-owner-a" })).arrayBuffer();
    await recorded(known, { key: "sk-owner-a" });
    for (const control of ["only-if-cached", ""]) {
      const headers = control ? { "cache-control": control } : undefined;
      const a = await shape(await chat(known, { key: "sk-prober-b", headers }));
      const b = await shape(await chat(unknown, { key: "sk-prober-c", headers }));
      expect(a).toEqual(b);
    }
  });

  it("Should not let a random key see any tree through the API, while the owner sees its own", async () => {
    const model = uniqueModel("echo");
    const body = { model, messages: [{ role: "user", content: "listed only for my key" }] };
    await (await chat(body, { key: "sk-lister" })).arrayBuffer();
    await recorded(body, { key: "sk-lister" });
    const own = (await (await api("/trees", { token: "sk-lister" })).json()) as { data: Array<{ model: string }> };
    expect(own.data.map((t) => t.model)).toContain(model);
    await fc.assert(
      fc.asyncProperty(keyArb, async (key) => {
        const res = await api("/trees", { token: key });
        const page = (await res.json()) as { data: Array<{ model: string }> };
        expect(page.data.map((t) => t.model)).not.toContain(model);
        const stats = await api("/stats", { token: key });
        expect(JSON.stringify(await stats.json())).not.toContain(model);
      }),
      { numRuns: 10, seed: 7 },
    );
  });
});
