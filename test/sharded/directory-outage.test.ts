import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config";
import { forgetShard, lapseShardMemory, shardFor } from "../../src/store/shards/directory";
import { api, newKey, ok, type Tree } from "../worker/api-helpers";
import { chat, recorded, uniqueModel } from "../worker/helpers";

/** Makes every read of the tree directory (in DB) fail, as an overloaded or unreachable directory would. */
function directoryDown(): void {
  const real = env.DB.prepare.bind(env.DB);
  vi.spyOn(env.DB, "prepare").mockImplementation((sql: string) => {
    if (sql.includes("tree_directory")) throw new Error("directory unavailable");
    return real(sql);
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the directory never stands between a warm tree and its hits", () => {
  it("Should serve a warm tree's hit from its last known shard while the directory fails, and fail open for a tree it never read", async () => {
    const key = newKey();
    const body = { model: uniqueModel("outage"), messages: [{ role: "user", content: `outage ${crypto.randomUUID()}` }] };
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    // A hit once the tree's row exists, so that this isolate has read it: recorded()'s probe may have been
    // served by the tree's object (after an empty read where the hash rule puts a tree with no row yet).
    await (await chat(body, { key })).arrayBuffer();
    // The isolate's fresh entry lapses (DIRECTORY_TTL_MS) and the directory goes down.
    lapseShardMemory();
    directoryDown();
    const hit = await chat(body, { key });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    await hit.arrayBuffer();
    const again = await chat(body, { key });
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    await again.arrayBuffer();
    // A tree this isolate never read must wait for the directory: down, its request goes to the model.
    const other = { model: uniqueModel("outage-cold"), messages: [{ role: "user", content: "never seen" }] };
    const cold = await chat(other, { key });
    expect(cold.status).toBe(200);
    expect(cold.headers.get("muscle-mem-cache")).toBe("bypass");
    await cold.arrayBuffer();
  });

  it("Should fail open to the model for a tree whose last known shard is forgotten while the directory fails", async () => {
    const key = newKey();
    const body = { model: uniqueModel("outage-forgot"), messages: [{ role: "user", content: `forgot ${crypto.randomUUID()}` }] };
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    const res = await chat(body, { key });
    const tree = res.headers.get("muscle-mem-tree");
    await res.arrayBuffer();
    lapseShardMemory();
    if (tree) forgetShard(tree);
    else for (const id of await treeIds()) forgetShard(id);
    directoryDown();
    const bypassed = await chat(body, { key });
    expect(bypassed.headers.get("muscle-mem-cache")).toBe("bypass");
    await bypassed.arrayBuffer();
  });
});

async function treeIds(): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT tree_id FROM tree_directory").all<{ tree_id: string }>();
  return rows.results.map((r) => r.tree_id);
}

/** Makes every read of the tree directory hang, as a directory too slow to answer would. */
function directorySlow(): void {
  const real = env.DB.prepare.bind(env.DB);
  vi.spyOn(env.DB, "prepare").mockImplementation((sql: string) => {
    if (!sql.includes("tree_directory")) return real(sql);
    const never = new Promise<never>(() => undefined);
    const statement = { bind: () => statement, first: () => never, all: () => never, run: () => never, raw: () => never };
    return statement as unknown as D1PreparedStatement;
  });
}

describe("a slow directory (DIRECTORY_TIMEOUT_MS)", () => {
  it("Should read a known tree's last known shard once DIRECTORY_TIMEOUT_MS passes, and fail a tree it never read, on a set clock", async () => {
    const key = newKey();
    const body = { model: uniqueModel("dir-timeout"), messages: [{ role: "user", content: `slow ${crypto.randomUUID()}` }] };
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    const listed = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    const tree = listed.data[0]?.id ?? "";
    expect(listed.data).toHaveLength(1);
    const home = await shardFor(env, tree, { timeoutMs: 500 });
    // The var's bound, as the config hands it to every directory read (500 ms unless set).
    expect([parseConfig({}).config.directoryTimeoutMs, parseConfig({ DIRECTORY_TIMEOUT_MS: "40" }).config.directoryTimeoutMs]).toEqual([500, 40]);
    lapseShardMemory();
    directorySlow();
    vi.useFakeTimers();
    try {
      let known: string | undefined;
      void shardFor(env, tree, { timeoutMs: 40 }).then((s) => (known = s.name));
      let cold: unknown;
      void shardFor(env, "c".repeat(32), { timeoutMs: 40 }).catch((error: unknown) => (cold = error));
      await vi.advanceTimersByTimeAsync(39);
      expect([known, cold]).toEqual([undefined, undefined]);
      await vi.advanceTimersByTimeAsync(1);
      expect(known).toBe(home.name);
      expect(String(cold)).toMatch(/directory read timed out after 40 ms/);
    } finally {
      vi.useRealTimers();
    }
    // The hit path never waits: the expired entry is read again after the response, the hit served now.
    const hit = await chat(body, { key });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    await hit.arrayBuffer();
  });
});
