import { describe, expect, it } from "vitest";
import type { ProviderAdapter, ProviderKey } from "../../src/cache/provider";
import { parseConfig } from "../../src/config";
import { deepFreeze, recordingHeaders, RequestMemo, requestMemoKey, type MemoEntry, type MemoKey } from "../../src/engine/request-memo";

const key: ProviderKey = { tenant: "t", namespace: "default", treeId: "tree", frameJson: "{}", model: "m", path: [], key: "h" };
const entry = (reads: Array<[string, string | null]>): MemoEntry<{ n: number[] }, ProviderKey> => ({ body: { n: [1] }, keyed: { ok: true, key }, reads });
const k = (raw: string, scope = "t\ndefault\nhttp://mm.test/v1/chat/completions"): MemoKey => ({ raw, scope });
const freshMemo = () => {
  // SAFETY: the memo only uses the adapter object as its identity.
  const adapter = {} as ProviderAdapter<{ n: number[] }, ProviderKey, unknown>;
  return RequestMemo.of(parseConfig({}).config, adapter);
};

describe("request memo", () => {
  it("Should note every header keying gets or asks for, and flag any other use", () => {
    const reads = new Map<string, string | null>();
    const all = { read: false };
    const seen = recordingHeaders(new Headers({ "OpenAI-Project": "proj_a" }), reads, all);
    expect(seen.get("openai-project")).toBe("proj_a");
    expect(seen.has("OpenAI-Organization")).toBe(false);
    expect([...reads]).toEqual([
      ["openai-project", "proj_a"],
      ["openai-organization", null],
    ]);
    expect(all.read).toBe(false);
    expect([...seen.keys()]).toEqual(["openai-project"]);
    expect(all.read).toBe(true);
  });

  it("Should serve an entry only while every header it read has the same value (absent included)", () => {
    const memo = freshMemo();
    memo.set(
      k("id"),
      entry([
        ["openai-project", "proj_a"],
        ["openai-organization", null],
      ]),
      false,
    );
    expect(memo.get(k("id"), new Headers({ "openai-project": "proj_a" }))?.keyed).toEqual({ ok: true, key });
    expect(memo.get(k("id"), new Headers({ "openai-project": "proj_b" }))).toBeUndefined();
    expect(memo.get(k("id"), new Headers())).toBeUndefined();
    expect(memo.get(k("id"), new Headers({ "openai-project": "proj_a", "openai-organization": "org_1" }))).toBeUndefined();
    expect(memo.get(k("other"), new Headers({ "openai-project": "proj_a" }))).toBeUndefined();
  });

  it("Should keep nothing when keying read the whole header set, or for bad input", () => {
    const memo = freshMemo();
    memo.set(k("all"), entry([]), true);
    memo.set(k("bad"), { ...entry([]), keyed: { ok: false, invalid: { message: "no", param: "messages" } } }, false);
    memo.set(k("bypass"), { ...entry([]), keyed: { ok: false, bypass: "n > 1" } }, false);
    expect(memo.get(k("all"), new Headers())).toBeUndefined();
    expect(memo.get(k("bad"), new Headers())).toBeUndefined();
    expect(memo.get(k("bypass"), new Headers())?.keyed).toEqual({ ok: false, bypass: "n > 1" });
  });

  it("Should hold about 8M characters of request text: the oldest entries go first, a body over 2M is never kept", () => {
    const memo = freshMemo();
    const id = (n: number, chars: number) => `${n}`.padEnd(chars, "x");
    for (let n = 0; n < 9; n++) memo.set(k(id(n, 1_000_000)), entry([]), false);
    expect(memo.get(k(id(0, 1_000_000)), new Headers())).toBeUndefined();
    for (let n = 1; n < 9; n++) expect(memo.get(k(id(n, 1_000_000)), new Headers())).toBeDefined();
    memo.set(k(id(9, 2_100_000)), entry([]), false);
    expect(memo.get(k(id(9, 2_100_000)), new Headers())).toBeUndefined();
  });

  it("Should freeze what it keeps, to the leaves", () => {
    const memo = freshMemo();
    const kept = entry([]);
    memo.set(k("id"), kept, false);
    expect(Object.isFrozen(kept.body)).toBe(true);
    expect(Object.isFrozen(kept.body.n)).toBe(true);
    expect(Object.isFrozen(kept.keyed)).toBe(true);
    expect(() => kept.body.n.push(2)).toThrow(TypeError);
    expect(deepFreeze(null)).toBeNull();
  });

  it("Should tell requests apart by tenant, namespace, URL and body text", () => {
    const url = new URL("http://mm.test/v1/chat/completions?api-version=1");
    const keys = [
      requestMemoKey("t1", "default", url, "{}"),
      requestMemoKey("t2", "default", url, "{}"),
      requestMemoKey("t1", "other", url, "{}"),
      requestMemoKey("t1", "default", new URL("http://mm.test/v1/chat/completions?api-version=2"), "{}"),
      requestMemoKey("t1", "default", url, "{ }"),
    ];
    expect(new Set(keys.map((key) => `${key.scope}\u0000${key.raw}`)).size).toBe(keys.length);
    const memo = freshMemo();
    keys.forEach((key, i) => memo.set(key, { ...entry([]), body: { n: [i] } }, false));
    keys.forEach((key, i) => expect(memo.get(key, new Headers())?.body).toEqual({ n: [i] }));
    expect(memo.get(requestMemoKey("t3", "default", url, "{}"), new Headers())).toBeUndefined();
  });
});
