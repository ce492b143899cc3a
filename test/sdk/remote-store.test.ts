import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Check, Engine, RemoteStore, type Trajectory } from "../../sdk/src/index.js";
import { fromLine, skillModel, toLine } from "../../sdk/src/store/wire.js";
import { ADMIN_TOKEN, FakeWorker } from "./support/fake-worker.js";

const TEAM_KEY = "sk-team";

let worker: FakeWorker;
let baseUrl: string;

beforeAll(async () => {
  worker = new FakeWorker();
  baseUrl = await worker.start();
});
afterAll(() => worker.stop());

/** One "machine": its own engine, store and tool instances, sharing only the Worker. */
function machine(namespace: string, token = TEAM_KEY, tenant?: string) {
  const engine = new Engine({ store: new RemoteStore({ baseUrl, namespace, token, tenant }), onWarning: () => {} });
  const env = { door: "closed" };
  const log: string[] = [];
  const move = engine.function(
    {
      name: "move",
      preCheck: new Check(
        (to: string) => ({ to, door: env.door }),
        (a, b) => a.door === b.door,
      ),
    },
    (to: string) => {
      log.push(`move ${to}`);
    },
  );
  const hooks: { onGrip?: () => void } = {};
  const grip = engine.function({ name: "grip" }, (force: number) => {
    log.push(`grip ${force}`);
    hooks.onGrip?.();
  });
  let agentRuns = 0;
  engine
    .setAgent((_task, { params }) => {
      agentRuns++;
      const plan = [() => move(String(params.target)), () => grip(5), () => move("home")];
      for (const step of plan) step();
    })
    .finalize();
  return Object.assign(hooks, { engine, env, log, agentRuns: () => agentRuns });
}

describe("RemoteStore against a fake trajectory API", () => {
  it("Should share a skill recorded on one machine with another", async () => {
    const a = machine("shared-skills");
    const b = machine("shared-skills");
    expect(await a.engine("pick", { tags: ["pick"], params: { target: "bin 1" } })).toBe(false);
    expect(await a.engine("pick", { tags: ["pick"], params: { target: "bin 2" } })).toBe(false); // proves target's binding
    expect(await b.engine("pick", { tags: ["pick"], params: { target: "bin 7" } })).toBe(true);
    expect(b.agentRuns()).toBe(0);
    expect(b.log).toEqual(["move bin 7", "grip 5", "move home"]);
  });

  it("Should keep namespaces apart", async () => {
    const a = machine("ns-a");
    const other = machine("ns-b");
    expect(await a.engine("pick", { tags: ["pick"], params: { target: "x" } })).toBe(false);
    expect(await other.engine("pick", { tags: ["pick"], params: { target: "x" } })).toBe(false);
  });

  it("Should store a branch as a branch of the same tree, sharing the prefix nodes", async () => {
    const tags = ["fetch"];
    const a = machine("branching");
    const recorded = await a.engine.run("fetch", { tags, params: { target: "t" } }); // door closed throughout
    const model = await skillModel({ tags });
    const tree = [...worker.trees.values()].find((t) => t.namespace === "branching" && t.model === model);
    const nodes = () => worker.nodesIn(tree?.id ?? "");
    expect(nodes()).toBe(8); // key, 3 x (call, result), end

    // Machine b finds the door open: the first move's pre-check fails, its agent records from scratch.
    const b = machine("branching");
    b.env.door = "open";
    expect(await b.engine("fetch", { tags, params: { target: "t" } })).toBe(false);
    expect(nodes()).toBe(8 + 6); // the key and the first call are shared; the rest differ

    // Machine c replays two steps; gripping opens the door, so the last move no longer matches.
    const c = machine("branching");
    c.onGrip = () => {
      c.env.door = "open";
    };
    const report = await c.engine.run("fetch", { tags, params: { target: "t" } });
    expect(report).toMatchObject({ hit: false, replayed: 2, recorded: 1, stored: true, branchOf: { id: recorded.trajectoryId, at: 2 } });
    expect(c.log).toEqual(["move t", "grip 5", "move home"]); // nothing ran twice
    expect(nodes()).toBe(8 + 6 + 2); // only the last result and the end marker are new
    const exported = await fetch(`${baseUrl}/api/trees/${tree?.id}/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect((await exported.text()).trim().split("\n")).toHaveLength(3);
  });

  it("Should send the bearer token and the namespace header", async () => {
    const a = machine("headers", "sk-tenant-key");
    await a.engine("pick", { tags: ["h"], params: { target: "t" } });
    const seen = worker.requests.filter((r) => r.url.includes("headers") || r.namespace === "headers");
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r.authorization === "Bearer sk-tenant-key")).toBe(true);
    expect(worker.requests.some((r) => r.method === "POST" && r.namespace === "headers")).toBe(true);
  });

  it("Should fail open: an unreachable Worker makes a miss, never an error", async () => {
    const warnings: string[] = [];
    const engine = new Engine({
      store: new RemoteStore({ baseUrl: "http://127.0.0.1:9", namespace: "x", token: "t", timeoutMs: 500 }),
      onWarning: (w) => warnings.push(w.kind),
    });
    const f = engine.function({ name: "f" }, () => 1);
    engine
      .setAgent(() => {
        f();
      })
      .finalize();
    expect(await engine("task")).toBe(false);
    expect(warnings).toEqual(["store-query", "store-add"]);
  });

  it("Should reject with the API's error message on 401", async () => {
    const store = new RemoteStore({ baseUrl, namespace: "x", token: "" });
    await expect(store.query({ task: "t" })).rejects.toThrow(/401/);
  });
});

/** The tenant id a key resolves to, as the Worker reports it. */
async function tenantOf(key: string): Promise<string> {
  const who = (await (await fetch(`${baseUrl}/api/whoami`, { headers: { authorization: `Bearer ${key}` } })).json()) as { tenant: string };
  return who.tenant;
}

describe("Issue 17.10: RemoteStore tenancy, argument text and reads", () => {
  it("Should refuse to record or read with the admin token unless a tenant is named, with the fix in the error", async () => {
    const admin = machine("admin-no-tenant", ADMIN_TOKEN);
    await expect(admin.engine("pick", { tags: ["pick"], params: { target: "x" } })).rejects.toThrow(/admin token.*tenant: /s);
    expect([...worker.trees.values()].some((t) => t.namespace === "admin-no-tenant")).toBe(false);
  });

  it("Should record as the named tenant with the admin token, and read only that tenant's skills", async () => {
    const team = await tenantOf("sk-team-a");
    const admin = machine("admin-tenant", ADMIN_TOKEN, team);
    expect(await admin.engine("pick", { tags: ["pick"], params: { target: "x" } })).toBe(false);
    const teammate = machine("admin-tenant", "sk-team-a");
    expect(await teammate.engine("pick", { tags: ["pick"], params: { target: "x" } })).toBe(true);

    const other = machine("admin-tenant", "sk-team-b");
    other.env.door = "open"; // another tenant records a path the admin could replay
    expect(await other.engine("fetch", { tags: ["fetch"], params: { target: "y" } })).toBe(false);
    const adminOfA = machine("admin-tenant", ADMIN_TOKEN, team);
    adminOfA.env.door = "open";
    expect(await adminOfA.engine("fetch", { tags: ["fetch"], params: { target: "y" } })).toBe(false);
  });

  it("Should replay arguments with their keys in the recorded order, byte for byte", async () => {
    const build = () => {
      const engine = new Engine({ store: new RemoteStore({ baseUrl, namespace: "arg-text", token: TEAM_KEY }), onWarning: () => {} });
      const sent: string[] = [];
      const post = engine.function({ name: "post" }, (body: Record<string, unknown>) => {
        sent.push(JSON.stringify(body));
      });
      engine
        .setAgent(() => {
          post({ zeta: 1, alpha: { y: 2, b: [3, { d: 4, c: 5 }] } });
        })
        .finalize();
      return { engine, sent };
    };
    const a = build();
    const b = build();
    expect(await a.engine("send")).toBe(false);
    expect(await b.engine("send")).toBe(true);
    expect(b.sent).toEqual(a.sent);
  });

  it("Should not download the skill tree again while it has not changed", async () => {
    const a = machine("no-redownload");
    expect(await a.engine("pick", { tags: ["pick"], params: { target: "x" } })).toBe(false);
    const exports = () => worker.requests.filter((r) => r.url.endsWith("/export")).length;
    const before = exports();
    for (let i = 0; i < 3; i++) expect(await a.engine("pick", { tags: ["pick"], params: { target: "x" } })).toBe(true);
    expect(exports() - before).toBeLessThanOrEqual(1);
  });
});

describe("wire format", () => {
  it("Should round-trip a trajectory through a JSONL line", async () => {
    const t: Trajectory = {
      id: "t1",
      key: { tags: ["a", "b"] },
      task: "do it",
      recordedAt: 123,
      branchOf: { id: "t0", at: 1 },
      steps: [
        { tool: "click", args: [{ value: 1 }, { value: "erik", param: "name" }], pre: { crop: [[1, 2]] }, result: "ok" },
        { tool: "type", args: [{ value: { $mm: "undefined" } }], post: null },
      ],
    };
    const line = toLine(t, await skillModel(t.key));
    expect(line.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
    expect(fromLine(JSON.parse(JSON.stringify(line)))).toEqual(t);
  });

  it("Should read content given as parts", async () => {
    const t: Trajectory = { id: "p", key: { task: "t" }, task: "t", recordedAt: 5, steps: [{ tool: "f", args: [], result: 1 }] };
    const line = JSON.parse(JSON.stringify(toLine(t, await skillModel(t.key)))) as { messages: { content: unknown }[] };
    line.messages = line.messages.map((m, i) =>
      typeof m.content !== "string" ? m : { ...m, content: i % 2 ? [m.content] : [{ type: "text", text: m.content }] },
    );
    expect(fromLine(line)).toEqual(t);
  });

  it("Should ignore lines that are not SDK trajectories", () => {
    expect(
      fromLine({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
        ],
      }),
    ).toBeUndefined();
    expect(fromLine("nope")).toBeUndefined();
  });
});
