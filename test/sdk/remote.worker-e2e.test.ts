import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Check, Engine, RemoteStore, type SkillKey } from "../../sdk/src/index.js";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev.js";

// Two engines on different "machines" share skills through the real Worker
// (wrangler dev, local D1) and its trajectory API (POST /api/import, GET /api/trees, export).

// Machines of one team share skills through the same upstream key (its tenant);
// the admin token must name a tenant to import (docs/api.md), so it is not used here.
const TEAM_KEY = "sk-sdk-team";
const ADMIN = "sdk-e2e-admin-token";
const ROOT = resolve(import.meta.dirname, "../..");

/** Runs one machine as its own process (test/sdk/support/remote-machine.ts): its tool calls, then its report. */
async function processMachine(namespace: string, token: string, tenant = ""): Promise<{ calls: string[]; hit: boolean; agentRuns: number }> {
  const { stdout } = await promisify(execFile)(
    resolve(ROOT, "node_modules/.bin/tsx"),
    ["test/sdk/support/remote-machine.ts", dev.url, namespace, token, tenant],
    { cwd: ROOT, timeout: 60_000 },
  );
  const lines = stdout.trim().split("\n");
  const last = JSON.parse(lines.at(-1) ?? "{}") as { report: { hit: boolean }; agentRuns: number };
  return { calls: lines.slice(0, -1), hit: last.report.hit, agentRuns: last.agentRuns };
}

let dev: WranglerDev;

/** One machine: its own engine, store, tools and world; only the Worker is shared. */
function machine(namespace: string, token: string, tenant?: string) {
  const store = new RemoteStore({ baseUrl: dev.url, namespace, token, tenant });
  const warnings: string[] = [];
  const engine = new Engine({ store, onWarning: (w) => warnings.push(`${w.kind}: ${w.message} ${String(w.error)}`) });
  const world = { shelf: "A" };
  const log: string[] = [];
  const pick = engine.function(
    {
      name: "pick",
      preCheck: new Check(
        (item: string) => ({ item, shelf: world.shelf }),
        (a, b) => a.shelf === b.shelf,
      ),
    },
    (item: string) => {
      log.push(`pick ${item} from ${world.shelf}`);
    },
  );
  const pack = engine.function({ name: "pack" }, (box: number) => {
    log.push(`pack into ${box}`);
  });
  let agentRuns = 0;
  engine
    .setAgent((_task, { params }) => {
      agentRuns++;
      const plan = [() => pick(String(params.item)), () => pack(3)];
      for (const step of plan) step();
    })
    .finalize();
  return { engine, store, world, log, warnings, agentRuns: () => agentRuns };
}

/** A machine whose agent fetches two items at once (Promise.all), then packs them. */
function parallelMachine(namespace: string) {
  const store = new RemoteStore({ baseUrl: dev.url, namespace, token: TEAM_KEY });
  const warnings: string[] = [];
  const engine = new Engine({ store, onWarning: (w) => warnings.push(`${w.kind}: ${w.message} ${String(w.error)}`) });
  const log: string[] = [];
  const state = { busy: 0, mostBusy: 0, agentRuns: 0 };
  const sameItem = new Check(
    (item: string) => item,
    (a, b) => a === b,
  );
  const fetchItem = engine.function({ name: "fetchItem", preCheck: sameItem }, async (item: string) => {
    log.push(`fetch ${item}`);
    state.busy++;
    state.mostBusy = Math.max(state.mostBusy, state.busy);
    await Promise.resolve();
    state.busy--;
    return item;
  });
  const pack = engine.function({ name: "pack" }, (items: string[]) => {
    log.push(`pack ${items.join()}`);
  });
  engine
    .setAgent(async () => {
      state.agentRuns++;
      pack(await Promise.all([fetchItem("mug"), fetchItem("pen")]));
    })
    .finalize();
  return { engine, store, log, state, warnings };
}

/** Import may land a moment after it answers: wait until the skill is readable. */
async function readable(store: RemoteStore, key: SkillKey, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await store.query(key)).length < count) {
    if (Date.now() > deadline) throw new Error("the recorded trajectory never became readable");
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("SDK RemoteStore against wrangler dev", () => {
  beforeAll(async () => {
    // The team key imports its own skills (the operator's grant, IMPORT_TENANTS). It is no real provider key and this
    // Worker has no upstream to check it with, so key freshness (test/worker/access.test.ts) is off here.
    dev = await startWranglerDev({ vars: { ADMIN_TOKEN: ADMIN, IMPORT_TENANTS: "*", KEY_FRESH_MS: "0" } });
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
  });

  it("Should share a skill recorded on one machine with another machine", async () => {
    const a = machine("sdk-e2e", TEAM_KEY);
    const b = machine("sdk-e2e", TEAM_KEY);
    expect(await a.engine("pick and pack", { tags: ["pick-pack"], params: { item: "mug" } })).toBe(false);
    expect(await a.engine("pick and pack", { tags: ["pick-pack"], params: { item: "pen" } })).toBe(false); // proves item's binding
    await readable(b.store, { tags: ["pick-pack"] }, 2);
    expect(await b.engine("pick and pack", { tags: ["pick-pack"], params: { item: "lamp" } })).toBe(true);
    expect(b.agentRuns()).toBe(0);
    expect(b.log).toEqual(["pick lamp from A", "pack into 3"]);
    expect([...a.warnings, ...b.warnings]).toEqual([]);
  });

  it("Should record a branch on one machine that the other then replays", async () => {
    const a = machine("sdk-e2e-branch", TEAM_KEY);
    const b = machine("sdk-e2e-branch", TEAM_KEY);
    const key = { tags: ["restock"] };
    expect(await a.engine("restock", { tags: key.tags, params: { item: "cup" } })).toBe(false);
    await readable(b.store, key, 1);
    b.world.shelf = "B"; // b's world differs: its pre-check fails, its agent records a second path
    expect(await b.engine("restock", { tags: key.tags, params: { item: "cup" } })).toBe(false);
    await readable(a.store, key, 2);
    a.world.shelf = "B";
    expect(await a.engine("restock", { tags: key.tags, params: { item: "cup" } })).toBe(true);
    expect(a.agentRuns()).toBe(1);
  });

  it("Should replay in another process the tool calls recorded by one, byte for byte", async () => {
    const first = await processMachine("sdk-e2e-bytes", TEAM_KEY);
    expect(first).toMatchObject({ hit: false, agentRuns: 1 });
    let second = await processMachine("sdk-e2e-bytes", TEAM_KEY);
    for (let i = 0; i < 20 && !second.hit; i++) second = await processMachine("sdk-e2e-bytes", TEAM_KEY); // import lands
    expect(second).toMatchObject({ hit: true, agentRuns: 0 });
    expect(second.calls).toEqual(first.calls);
    expect(first.calls).toHaveLength(3);
  }, 120_000);

  // Issue 27, item 8: a parallel step travels as one assistant message with two tool calls.
  it("Should keep a parallel step whole through the Worker, and replay it in parallel on another machine", async () => {
    const a = parallelMachine("sdk-e2e-parallel");
    const b = parallelMachine("sdk-e2e-parallel");
    const key = { tags: ["fetch-two"] };
    expect(await a.engine("fetch two", { tags: key.tags })).toBe(false);
    await readable(b.store, key, 1);
    const [stored] = await b.store.query(key);
    expect(stored.steps.map((s) => ("parallel" in s ? s.parallel.map((c) => c.tool) : s.tool))).toEqual([["fetchItem", "fetchItem"], "pack"]);
    expect(await b.engine.run("fetch two", { tags: key.tags })).toMatchObject({ hit: true, replayed: 3 });
    expect(b.state).toMatchObject({ agentRuns: 0, mostBusy: 2 });
    expect(b.log).toEqual(["fetch mug", "fetch pen", "pack mug,pen"]);
    expect([...a.warnings, ...b.warnings]).toEqual([]);
  });

  it("Should refuse the admin token without a tenant, and record as the tenant it names", async () => {
    const lost = machine("sdk-e2e-admin", ADMIN);
    await expect(lost.engine("ship", { tags: ["ship"], params: { item: "x" } })).rejects.toThrow(/admin token.*tenant/s);
    const who = (await (await fetch(`${dev.url}/api/whoami`, { headers: { authorization: `Bearer ${TEAM_KEY}` } })).json()) as { tenant: string };
    const admin = machine("sdk-e2e-admin", ADMIN, who.tenant);
    expect(await admin.engine("ship", { tags: ["ship"], params: { item: "x" } })).toBe(false);
    const teammate = machine("sdk-e2e-admin", TEAM_KEY);
    await readable(teammate.store, { tags: ["ship"] }, 1);
    expect(await teammate.engine("ship", { tags: ["ship"], params: { item: "x" } })).toBe(true);
    const stranger = machine("sdk-e2e-admin", ADMIN, "0".repeat(32)); // the admin reading another tenant sees none of it
    expect(await stranger.store.query({ tags: ["ship"] })).toEqual([]);
  });

  it("Should keep one tenant's skills from another tenant", async () => {
    const owner = machine("sdk-e2e-tenants", "sk-sdk-owner");
    const stranger = machine("sdk-e2e-tenants", "sk-sdk-stranger");
    const teammate = machine("sdk-e2e-tenants", "sk-sdk-owner");
    expect(await owner.engine("ship", { tags: ["ship"], params: { item: "x" } })).toBe(false);
    await readable(teammate.store, { tags: ["ship"] }, 1);
    expect(await stranger.engine("ship", { tags: ["ship"], params: { item: "x" } })).toBe(false);
    expect(await teammate.engine("ship", { tags: ["ship"], params: { item: "x" } })).toBe(true);
  });
});
