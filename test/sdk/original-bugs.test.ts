import { describe, expect, it, vi } from "vitest";
import { Check, Engine, MemoryStore, type EngineWarning, type Trajectory } from "../../sdk/src/index.js";
import { singleSteps } from "./support/steps.js";

// One test per defect of the original Python SDK. Each would fail on the original behaviour.

function scoredEngine(score: number, threshold = 0.5) {
  const engine = new Engine();
  const tap = engine.function(
    {
      name: "tap",
      preCheck: new Check(
        () => "screen",
        () => score,
        { threshold },
      ),
    },
    (_x: number) => undefined,
  );
  let agentRuns = 0;
  engine
    .setAgent(() => {
      agentRuns++;
      tap(1);
    })
    .finalize();
  return { engine, agentRuns: () => agentRuns };
}

describe("Bug: a float compare only counted as truthy or falsy", () => {
  it.each([
    [0.3, false],
    [0.0, false],
    [Number.NaN, false], // truthy in Python
    [1.5, false], // out of [0, 1]: truthy in Python, never a pass here
    [0.5, true],
    [0.7, true],
  ])("Should judge a score of %s against a 0.5 threshold (hit: %s)", async (score, hit) => {
    const { engine, agentRuns } = scoredEngine(score);
    expect(await engine("tap")).toBe(false);
    expect(await engine("tap")).toBe(hit);
    expect(agentRuns()).toBe(hit ? 1 : 2);
  });
});

describe("Bug: a mid-trajectory mismatch restarted the agent and ran steps twice", () => {
  function setup() {
    const store = new MemoryStore();
    const engine = new Engine({ store });
    const env: Record<string, string> = { s0: "ok", s1: "ok", s2: "ok" };
    const ran: string[] = [];
    const step = engine.function(
      {
        name: "step",
        preCheck: new Check(
          (id: string) => env[id],
          (a, b) => a === b,
        ),
        postCheck: new Check(
          (id: string) => `${id}:${env[`${id}.after`] ?? "same"}`,
          (a, b) => a === b,
        ),
      },
      (id: string) => {
        ran.push(id);
      },
    );
    // The original README's agent: it always starts from the top.
    engine
      .setAgent(() => {
        for (const id of ["s0", "s1", "s2"]) step(id);
      })
      .finalize();
    return { engine, store, env, ran };
  }

  it("Should not run the replayed steps again when a pre-check fails mid-way, and record a branch", async () => {
    const { engine, store, env, ran } = setup();
    await engine("three steps");
    const [first] = store.dump();
    ran.length = 0;

    env.s1 = "changed";
    const report = await engine.run("three steps");
    expect(report).toMatchObject({ hit: false, replayed: 1, recorded: 2, stored: true, branchOf: { id: first.id, at: 1 } });
    expect(ran).toEqual(["s0", "s1", "s2"]); // s0 ran once, not again by the agent

    const branch = store.dump().find((t) => t.id !== first.id) as Trajectory;
    expect(branch.steps[0]).toEqual(first.steps[0]); // the shared prefix, verbatim
    expect(singleSteps(branch)[1].pre).toBe("changed");

    ran.length = 0;
    expect(await engine("three steps")).toBe(true); // the branch now serves the changed world
    expect(ran).toEqual(["s0", "s1", "s2"]);
  });

  it("Should keep a step whose post-check failed as done, and continue after it", async () => {
    const { engine, store, env, ran } = setup();
    await engine("three steps");
    const [first] = store.dump();
    ran.length = 0;

    env["s1.after"] = "different";
    const report = await engine.run("three steps");
    expect(report).toMatchObject({ hit: false, replayed: 2, recorded: 1, branchOf: { id: first.id, at: 1 } });
    expect(ran).toEqual(["s0", "s1", "s2"]);
    const branch = store.dump().find((t) => t.id !== first.id) as Trajectory;
    expect(singleSteps(branch).map((s) => s.post)).toEqual(["s0:same", "s1:different", "s2:same"]);
  });
});

describe("Bug: every run was stored, hits included", () => {
  it("Should store the miss only", async () => {
    const store = new MemoryStore();
    const add = vi.spyOn(store, "add");
    const engine = new Engine({ store });
    const hello = engine.function({ name: "hello" }, (name: string) => name);
    engine
      .setAgent((task) => {
        hello(task);
      })
      .finalize();
    expect(await engine("erik")).toBe(false);
    for (let i = 0; i < 3; i++) expect(await engine("erik")).toBe(true);
    expect(add).toHaveBeenCalledTimes(1);
    expect(store.size).toBe(1);
  });
});

describe("Bug: an empty trajectory turned every later call into an instant hit", () => {
  it("Should not store a run in which the agent called no tools", async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store });
    engine.function({ name: "unused" }, () => undefined);
    let agentRuns = 0;
    engine
      .setAgent(() => {
        agentRuns++;
      })
      .finalize();
    expect(await engine.run("nothing to do")).toMatchObject({ hit: false, stored: false });
    expect(await engine("nothing to do")).toBe(false);
    expect(agentRuns).toBe(2);
    expect(store.size).toBe(0);
  });

  it("Should never serve an empty trajectory found in the store", async () => {
    const empty: Trajectory = { id: "e", key: { task: "t" }, task: "t", steps: [], recordedAt: 1 };
    const engine = new Engine({ store: new MemoryStore([empty]) });
    engine.function({ name: "unused" }, () => undefined);
    let agentRuns = 0;
    engine
      .setAgent(() => {
        agentRuns++;
      })
      .finalize();
    expect(await engine("t")).toBe(false);
    expect(agentRuns).toBe(1);
  });
});

describe("Bug: None and unhashable arguments crashed", () => {
  function recorder() {
    const warnings: EngineWarning[] = [];
    const engine = new Engine({ onWarning: (w) => warnings.push(w) });
    const calls: unknown[][] = [];
    const act = engine.function(
      {
        name: "act",
        preCheck: new Check(
          (...args: unknown[]) => args.length,
          (a, b) => a === b,
        ),
      },
      (...args: unknown[]) => {
        calls.push(args);
      },
    );
    return { engine, calls, act, warnings };
  }

  it("Should record and replay null and undefined arguments", async () => {
    const { engine, calls, act } = recorder();
    engine
      .setAgent(() => {
        act(null, undefined, { note: undefined, n: null });
        act();
      })
      .finalize();
    expect(await engine("nulls")).toBe(false);
    expect(await engine("nulls")).toBe(true);
    expect(calls[2]).toStrictEqual([null, undefined, { note: undefined, n: null }]);
    expect(calls[3]).toStrictEqual([]);
  });

  it("Should record and replay object and array arguments, and match them to params", async () => {
    const { engine, calls, act } = recorder();
    engine
      .setAgent((_task, { params }) => {
        act({ b: [1, { c: 2 }], a: "x" }, [3, 4]);
        act(params.order);
      })
      .finalize();
    const order1 = { id: "A-1", items: [1, 2] };
    const order2 = { id: "B-2", items: [3] };
    const order3 = { id: "C-3", items: [] };
    expect(await engine("ship", { params: { order: order1 } })).toBe(false);
    expect(await engine("ship", { params: { order: order2 } })).toBe(false); // a second value proves the binding
    expect(await engine("ship", { params: { order: order3 } })).toBe(true);
    expect(calls[4]).toStrictEqual([{ b: [1, { c: 2 }], a: "x" }, [3, 4]]);
    expect(calls[5]).toStrictEqual([order3]);
  });

  it("Should run, not store, and not crash on arguments that cannot be stored", async () => {
    const { engine, calls, act, warnings } = recorder();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    engine
      .setAgent(() => {
        act(() => 1);
        act(new Map());
        act(cyclic);
        act(10n);
      })
      .finalize();
    expect(await engine.run("weird")).toMatchObject({ hit: false, stored: false });
    expect(calls).toHaveLength(4);
    expect(warnings.map((w) => w.kind)).toEqual(["not-storable"]);
    expect(await engine("weird")).toBe(false);
  });
});

describe("Bug: there was no persistence", () => {
  it("Should serve recordings to a new engine from a restored store", async () => {
    const build = (store: MemoryStore) => {
      const engine = new Engine({ store });
      let agentRuns = 0;
      const hello = engine.function({ name: "hello" }, (name: string) => name);
      engine
        .setAgent((task) => {
          agentRuns++;
          hello(task);
        })
        .finalize();
      return { engine, agentRuns: () => agentRuns };
    };
    const before = build(new MemoryStore());
    const store = new MemoryStore();
    const first = build(store);
    expect(await first.engine("erik")).toBe(false);
    const saved = JSON.stringify(store.dump()); // e.g. to a file, or use RemoteStore

    const restarted = build(new MemoryStore(JSON.parse(saved) as Trajectory[]));
    expect(await restarted.engine("erik")).toBe(true);
    expect(restarted.agentRuns()).toBe(0);
    expect(await before.engine("erik")).toBe(false); // a store that never saw it misses
  });
});
