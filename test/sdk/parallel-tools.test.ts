import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Check, Engine, MemoryStore, RemoteStore, type EngineWarning } from "../../sdk/src/index.js";
import { fromLine, toLine } from "../../sdk/src/store/wire.js";
import { FakeWorker } from "./support/fake-worker.js";

// Issue 27, item 8: an agent that runs tools with Promise.all is recorded as one parallel step and
// replayed the same way, with the pre-checks of all its calls evaluated before any call starts.
// The tools yield with `await Promise.resolve()`, never a timer: calls overlap because the agent
// starts the second before the first has settled, whatever the machine's speed.

/**
 * A world of named values that checks read, and a log of what the tools and captures did, in order.
 * The engine's store is `remote` when given, else the returned memory store.
 */
function setup(remote?: RemoteStore) {
  const warnings: EngineWarning[] = [];
  const store = new MemoryStore();
  const engine = new Engine({ store: remote ?? store, onWarning: (w) => warnings.push(w) });
  const world: Record<string, string> = { a: "ready", b: "ready", c: "ready" };
  const log: string[] = [];
  const state = { busy: 0, mostBusy: 0, agentRuns: 0, failing: new Set<string>(), skipB: false };
  const ready = new Check(
    (name: string) => {
      log.push(`pre ${name}`);
      return world[name];
    },
    (current, recorded) => current === recorded,
  );
  const done = new Check(
    (name: string) => {
      log.push(`post ${name}`);
      return `${world[name]} after ${name}`;
    },
    (current, recorded) => current === recorded,
  );
  const load = engine.function({ name: "load", version: "1", preCheck: ready, postCheck: done }, async (name: string) => {
    log.push(`start ${name}`);
    state.busy++;
    state.mostBusy = Math.max(state.mostBusy, state.busy);
    await Promise.resolve();
    await Promise.resolve();
    state.busy--;
    if (state.failing.delete(name)) throw new Error(`${name} failed`);
    log.push(`end ${name}`);
    return `${name}!`;
  });
  const note = engine.function({ name: "note", version: "1" }, (text: string) => {
    log.push(`note ${text}`);
  });
  engine
    .setAgent(async () => {
      state.agentRuns++;
      note("begin");
      if (state.skipB) {
        await load("a");
        return;
      }
      const results = await Promise.all([load("a"), load("b")]);
      note(results.join(" "));
    })
    .finalize();
  return { engine, store, world, log, state, warnings };
}

describe("Issue 27.8: tools the agent runs at the same time", () => {
  it("Should record overlapping calls as one parallel step between the steps around it", async () => {
    const { engine, store } = setup();
    expect(await engine.run("load both")).toMatchObject({ hit: false, recorded: 4, stored: true });
    const [trajectory] = store.dump();
    expect(trajectory.steps.map((s) => ("parallel" in s ? s.parallel.map((c) => c.tool) : s.tool))).toEqual(["note", ["load", "load"], "note"]);
    const parallel = trajectory.steps[1];
    if (!("parallel" in parallel)) throw new Error("step 1 is not parallel");
    expect(parallel.parallel.map((c) => [c.args, c.pre, c.post, c.result])).toEqual([
      [[{ value: "a" }], "ready", "ready after a", "a!"],
      [[{ value: "b" }], "ready", "ready after b", "b!"],
    ]);
  });

  it("Should replay the parallel step the same way: both calls running at once, without the agent", async () => {
    const { engine, log, state } = setup();
    await engine("load both");
    expect(state.mostBusy).toBe(2);
    log.length = 0;
    state.mostBusy = 0;
    expect(await engine.run("load both")).toMatchObject({ hit: true, replayed: 4 });
    expect(state).toMatchObject({ agentRuns: 1, mostBusy: 2 });
    expect(log.filter((l) => l.startsWith("note"))).toEqual(["note begin", "note a! b!"]);
  });

  it("Should evaluate the pre-checks of every call of the step before starting any of them", async () => {
    const { engine, log } = setup();
    await engine("load both");
    // Recording: each capture is taken when its call is made, so b's comes after a has started.
    expect(log.slice(0, 4)).toEqual(["note begin", "pre a", "start a", "pre b"]);
    log.length = 0;
    expect(await engine("load both")).toBe(true);
    expect(log.slice(0, 5)).toEqual(["note begin", "pre a", "pre b", "start a", "start b"]);
  });

  it("Should start none of the step's calls when one call's pre-check fails, and hand over to the agent", async () => {
    const { engine, world, log, state } = setup();
    await engine("load both");
    world.b = "busy";
    log.length = 0;
    const report = await engine.run("load both");
    expect(report).toMatchObject({ hit: false, replayed: 1, stored: true, reason: "pre-check failed at step 1 (load + load)" });
    // The replay ran note("begin") only; the agent repeated it from the replay and ran the loads itself, once each.
    expect(log.filter((l) => l.startsWith("start") || l.startsWith("note"))).toEqual(["note begin", "start a", "start b", "note a! b!"]);
    expect(state.agentRuns).toBe(2);
    expect(await engine("load both")).toBe(true); // the branch recorded with b busy
  });

  it("Should branch when a call's post-check differs, storing the step as observed, then serve the branch", async () => {
    const { engine, store, world, log } = setup();
    await engine("load both");
    const [first] = store.dump();
    // a still reads "ready" before the step, but "moved" once it has started: its post-check differs.
    Object.defineProperty(world, "a", { get: () => (log.includes("start a") ? "moved" : "ready") });
    log.length = 0;
    const report = await engine.run("load both");
    expect(report).toMatchObject({
      hit: false,
      replayed: 3,
      recorded: 1,
      branchOf: { id: first.id, at: 1 },
      reason: "post-check failed at step 1 (load + load)",
    });
    expect(log.filter((l) => l.startsWith("start"))).toEqual(["start a", "start b"]); // run by the replay only, not again by the agent
    const branch = store.dump().find((t) => t.id !== first.id);
    const diverged = branch?.steps[1];
    expect(diverged && "parallel" in diverged ? diverged.parallel.map((c) => c.post) : diverged).toEqual(["moved after a", "ready after b"]);
    log.length = 0;
    expect(await engine("load both")).toBe(true);
  });

  it("Should run again only the call that threw in a parallel step, and store the step it completes", async () => {
    const { engine, store, log, state, warnings } = setup();
    await engine("load both");
    const [first] = store.dump();
    state.failing.add("b");
    log.length = 0;
    const report = await engine.run("load both");
    expect(report).toMatchObject({ hit: false, replayed: 2, recorded: 2, stored: true, branchOf: { id: first.id, at: 1 } });
    expect(report.reason).toBe("replayed tool load threw at step 1: b failed");
    expect(warnings.map((w) => w.kind)).toEqual(["tool-error"]);
    // The replay's a finished and is not run again: the agent's a is answered from the replay, its b runs.
    const runs = log.filter((l) => /^(start|end|note)/.test(l));
    expect(runs).toEqual(["note begin", "start a", "start b", "end a", "start b", "end b", "note a! b!"]);
    const branch = store.dump().find((t) => t.id !== first.id);
    expect(branch?.steps).toEqual(first.steps); // the same calls, captures and results: b's retry completed the step
    log.length = 0;
    expect(await engine.run("load both")).toMatchObject({ hit: true, replayed: 4 });
  });

  it("Should store nothing when the agent does not run again the call that threw", async () => {
    const { engine, store, state, warnings } = setup();
    await engine("load both");
    state.failing.add("b");
    state.skipB = true;
    expect(await engine.run("load both")).toMatchObject({ hit: false, stored: false, reason: expect.stringMatching(/before repeating/) });
    expect(warnings.map((w) => w.kind)).toEqual(["tool-error", "not-storable"]);
    expect(store.size).toBe(1);
  });

  it("Should store the observed captures of a hit as parallel steps with onHit: refresh", async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, onHit: "refresh", onWarning: () => {} });
    const load = engine.function({ name: "load" }, async (n: number) => {
      await Promise.resolve();
      return n;
    });
    engine
      .setAgent(async () => {
        await Promise.all([load(1), load(2)]);
      })
      .finalize();
    await engine("two");
    expect(await engine.run("two")).toMatchObject({ hit: true, stored: true });
    expect(store.dump().map((t) => t.steps.map((s) => ("parallel" in s ? s.parallel.length : 1)))).toEqual([[2], [2]]);
  });
});

describe("Issue 27.8: a parallel step in the Worker", () => {
  let worker: FakeWorker;
  let baseUrl: string;
  beforeAll(async () => {
    worker = new FakeWorker();
    baseUrl = await worker.start();
  });
  afterAll(() => worker.stop());

  it("Should travel as one assistant message with a tool call per call, and come back the same", () => {
    const step = (arg: string) => ({ tool: "load", version: "1", args: [{ value: arg }], pre: "ready", result: `${arg}!` });
    const trajectory = { id: "t1", key: { tags: ["x"] }, task: "x", recordedAt: 5, steps: [step("z"), { parallel: [step("a"), step("b")] }] };
    const line = toLine(trajectory, "m");
    expect(line.messages.map((m) => ("tool_calls" in m ? `calls ${m.tool_calls.length}` : m.role))).toEqual([
      "user",
      "calls 1",
      "tool",
      "calls 2",
      "tool",
      "tool",
      "assistant",
    ]);
    expect(fromLine(JSON.parse(JSON.stringify(line)))).toEqual(trajectory);
  });

  it("Should replay a parallel step recorded on another machine", async () => {
    const first = setup(new RemoteStore({ baseUrl, namespace: "parallel", token: "sk-team" }));
    expect(await first.engine("load both")).toBe(false);
    const second = setup(new RemoteStore({ baseUrl, namespace: "parallel", token: "sk-team" }));
    expect(await second.engine.run("load both")).toMatchObject({ hit: true, replayed: 4 });
    expect(second.state).toMatchObject({ agentRuns: 0, mostBusy: 2 });
  });
});
