import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ask, importLines, judge, seedTree, treeIdOf } from "../../bench/scale-seed";
import { BINDINGS, buildWorker, type Build } from "../../scripts/shard-load-dev";
import { startScriptedModel, type ScriptedModel } from "../../tools/scripted-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

/**
 * A tree's move under `wrangler dev` (POST /api/trees/:id/move over two local
 * shards), with every hit reading D1 (no memory TTLs): the local Worker keeps
 * answering while the move runs. Before each page of the move yielded to the
 * event loop (src/store/shards/move-pages.ts `breathe`), the move's chain of
 * in-process D1 calls kept workerd from reading its sockets: no request,
 * not even GET /healthz, was answered until the move ended
 * (docs/performance.md "Scale rows").
 */
const KEY = "Bearer sk-e2e-move";
const NAMESPACE = "e2e-move";
const MODEL = "e2e-move-model";

let model: ScriptedModel;
let build: Build;
let dev: WranglerDev;
const admin = randomBytes(16).toString("hex");

beforeAll(async () => {
  model = await startScriptedModel({ script: () => ({ role: "assistant", content: "Not recorded here." }) });
  build = await buildWorker();
  const vars = {
    UPSTREAM_BASE_URL: model.url,
    D1_SHARDS: "DB,DB_1",
    ADMIN_TOKEN: admin,
    HOT_CACHE_TTL_MS: "0",
    COLO_CACHE_TTL_MS: "0",
    LOG_LEVEL: "warn",
    IMPORT_TENANTS: "*",
  };
  dev = await startWranglerDev({ config: build.config, vars, logLevel: "error", migrate: BINDINGS, freeInspector: true, readyTimeoutMs: 90_000 });
  // A hang guard: a build and a wrangler dev on a loaded 2-core machine took longer than the project's 120 s.
}, 300_000);

afterAll(async () => {
  await dev?.stop();
  build?.remove();
  await model?.close();
});

async function nodesIn(binding: string, treeId: string): Promise<number> {
  const [row] = await dev.sql(`SELECT count(*) AS n FROM nodes WHERE tree_id = '${treeId}'`, binding);
  return Number(row?.n ?? 0);
}

describe("moving a tree under wrangler dev", () => {
  it("Should answer GET /healthz and the moving tree's hits (each right) while the move runs, and leave nothing in the source", {
    timeout: 240_000,
  }, async () => {
    // 1,500 two-turn conversations and 10 disputed prompts: 6,031 nodes, 1,510 siblings under the system message.
    const seed = seedTree(MODEL, 1500, { disputed: 10, tag: "e2e-move" });
    await importLines(dev.url, KEY, NAMESPACE, seed.lines);
    const treeId = await treeIdOf(dev.url, KEY, NAMESPACE);
    const [dir] = await dev.sql(`SELECT shard FROM tree_directory WHERE tree_id = '${treeId}'`);
    const from = String(dir?.shard ?? "");
    const to = from === "DB" ? "DB_1" : "DB";
    const nodes = await nodesIn(from, treeId);
    expect(nodes).toBe(seed.nodes);

    let moving = true;
    const answeredDuringMove = { healthz: 0, hits: 0 };
    const verdicts: Record<string, number> = {};
    const healthz = async () => {
      while (moving) {
        const res = await fetch(`${dev.url}/healthz`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        if (moving) answeredDuringMove.healthz++;
      }
    };
    const hits = async () => {
      for (let i = 0; moving; i++) {
        const probe = seed.probes[(i * 7919) % seed.probes.length];
        const verdict = judge(probe, await ask(dev.url, KEY, NAMESPACE, probe.body));
        verdicts[verdict] = (verdicts[verdict] ?? 0) + 1;
        if (moving) answeredDuringMove.hits++;
      }
    };
    const load = Promise.all([healthz(), hits(), hits()]);
    const res = await fetch(`${dev.url}/api/trees/${treeId}/move`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ to }),
    });
    moving = false;
    const moved = (await res.json()) as { copied?: { nodes: number }; deleted?: { nodes: number } };
    await load;

    expect(res.status).toBe(200);
    expect(moved.copied?.nodes).toBe(nodes);
    expect(moved.deleted?.nodes).toBe(nodes);
    // Answered while the move ran. Each loop sends its next request only when the last one is answered; a
    // stalled runtime still answers about one a loop before it reads the move's request and one stuck behind
    // it together with the move's response: many round trips a loop are what shows it answering meanwhile.
    expect(answeredDuringMove.healthz, JSON.stringify(answeredDuringMove)).toBeGreaterThanOrEqual(10);
    expect(answeredDuringMove.hits, JSON.stringify(answeredDuringMove)).toBeGreaterThanOrEqual(20);
    // Every answer right: a recorded path its recorded text, a disputed one nothing (504).
    expect(verdicts).toEqual({ right: expect.any(Number) });
    expect(await nodesIn(from, treeId)).toBe(0);
    expect(await nodesIn(to, treeId)).toBe(nodes);
  });
});
