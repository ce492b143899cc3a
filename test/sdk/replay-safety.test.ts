import { describe, expect, it } from "vitest";
import { Check, Engine, MemoryStore, type EngineWarning, type Trajectory } from "../../sdk/src/index.js";
import { singleSteps } from "./support/steps.js";

// Issue 17, defects 1, 2, 3 and 6: replays that skip, duplicate or misplace a step.

function quiet(store = new MemoryStore()) {
  const warnings: EngineWarning[] = [];
  return { engine: new Engine({ store, onWarning: (w) => warnings.push(w) }), store, warnings };
}

describe("Issue 17.1: a sub-task run inside the agent's own run", () => {
  function setup(catchIt: boolean) {
    const { engine, store } = quiet();
    const ran: string[] = [];
    const a = engine.function({ name: "a" }, () => {
      ran.push("a");
    });
    const b = engine.function({ name: "b" }, () => {
      ran.push("b");
    });
    engine
      .setAgent(async (task) => {
        if (task === "sub") {
          b();
          return;
        }
        a();
        if (!catchIt) {
          await engine("sub");
          return;
        }
        try {
          await engine("sub");
        } catch {
          /* the agent swallows it */
        }
      })
      .finalize();
    return { engine, store, ran };
  }

  it("Should refuse the nested call with an error that says what to do", async () => {
    const { engine, store } = setup(false);
    await expect(engine("outer")).rejects.toThrow(/inside its own run.*inside a tool/s);
    expect(store.size).toBe(0);
  });

  it("Should never store an outer run whose agent swallowed the refusal, so no later hit skips the sub-task", async () => {
    const { engine, store, ran } = setup(true);
    expect(await engine.run("outer")).toMatchObject({ hit: false, stored: false });
    expect(store.size).toBe(0);
    ran.length = 0;
    expect(await engine("outer")).toBe(false);
    expect(ran).toEqual(["a"]);
  });
});

describe("Issue 17.1: a sub-task run by another engine inside the agent's run", () => {
  it("Should refuse it too (a hit of the outer engine would skip it), but allow an engine inside a tool", async () => {
    const outer = quiet();
    const inner = quiet();
    const ran: string[] = [];
    const b = inner.engine.function({ name: "b" }, () => {
      ran.push("b");
    });
    inner.engine
      .setAgent(() => {
        b();
      })
      .finalize();
    const a = outer.engine.function({ name: "a" }, () => {
      ran.push("a");
    });
    const delegate = outer.engine.function({ name: "delegate" }, async () => inner.engine("sub"));
    outer.engine
      .setAgent(async (task) => {
        a();
        if (task === "direct") await inner.engine("sub");
        else await delegate();
      })
      .finalize();
    await expect(outer.engine("direct")).rejects.toThrow(/inside (its own|another engine's) run/);
    expect(outer.store.size).toBe(0);
    expect(await outer.engine.run("via a tool")).toMatchObject({ stored: true }); // the tool is the recorded step
    ran.length = 0;
    expect(await outer.engine("via a tool")).toBe(true);
    expect(ran).toEqual(["a", "b"]);
  });
});

describe("Issue 17.2: an agent that ignores the replayed steps after a mid-replay mismatch", () => {
  // The original README's agent: it always starts from the top.
  function setup() {
    const { engine, store } = quiet();
    const env: Record<string, string> = { a: "ok", b: "ok", c: "ok" };
    const ran: string[] = [];
    const step = engine.function(
      {
        name: "step",
        preCheck: new Check(
          (id: string) => env[id],
          (x, y) => x === y,
        ),
      },
      (id: string) => {
        ran.push(id);
        return `did ${id}`;
      },
    );
    const seen: unknown[] = [];
    engine
      .setAgent(() => {
        for (const id of ["a", "b", "c"]) seen.push(step(id));
      })
      .finalize();
    return { engine, store, env, ran, seen };
  }

  it("Should not run the replayed steps again, and store [a, b, c], not [a, a, b, c]", async () => {
    const { engine, store, env, ran, seen } = setup();
    await engine("abc");
    ran.length = 0;
    seen.length = 0;
    env.b = "changed";
    expect(await engine.run("abc")).toMatchObject({ hit: false, replayed: 1, recorded: 2, stored: true });
    expect(ran).toEqual(["a", "b", "c"]);
    expect(seen).toEqual(["did a", "did b", "did c"]); // the agent's call to a got a's replayed result
    const branch = store.dump().find((t) => t.branchOf) as Trajectory;
    expect(singleSteps(branch).map((s) => s.args)).toEqual([[{ value: "a" }], [{ value: "b" }], [{ value: "c" }]]);
    ran.length = 0;
    expect(await engine("abc")).toBe(true);
    expect(ran).toEqual(["a", "b", "c"]);
  });

  it("Should store nothing when the agent's calls differ from the steps already replayed", async () => {
    const { engine, store, warnings } = quiet();
    const env = { b: "ok", first: "a" };
    const step = engine.function(
      {
        name: "step",
        preCheck: new Check(
          (id: string) => (id === "b" ? env.b : "ok"),
          (x, y) => x === y,
        ),
      },
      (_id: string) => {},
    );
    engine
      .setAgent(() => {
        step(env.first);
        step("b");
      })
      .finalize();
    await engine("ab");
    env.b = "changed";
    env.first = "z"; // the agent now starts elsewhere: the replayed a cannot be attributed to it
    expect(await engine.run("ab")).toMatchObject({ hit: false, stored: false, reason: expect.stringMatching(/replayed/) });
    expect(store.size).toBe(1);
    expect(warnings.map((w) => w.kind)).toContain("not-storable");
  });
});

describe("Issue 17.3: tools called one after another (parallel tools: parallel-tools.test.ts)", () => {
  it("Should still record tools awaited one after another", async () => {
    const { engine, store } = quiet();
    const load = engine.function({ name: "load" }, async (n: number) => n);
    engine
      .setAgent(async () => {
        await load(1);
        await load(2);
      })
      .finalize();
    expect(await engine.run("both")).toMatchObject({ stored: true });
    expect(await engine("both")).toBe(true);
    expect(store.size).toBe(1);
  });
});

describe("Issue 17.6: a tool that throws during a replay", () => {
  it("Should fall back to the agent from the failed step, without repeating the steps before it", async () => {
    const { engine, store, warnings } = quiet();
    const ran: string[] = [];
    let stalls = 0;
    const move = engine.function({ name: "move" }, (to: string) => {
      if (to === "b" && stalls > 0) {
        stalls--;
        throw new Error("motor stalled");
      }
      ran.push(to);
    });
    engine
      .setAgent(() => {
        move("a");
        move("b");
        move("c");
      })
      .finalize();
    await engine("route");
    ran.length = 0;
    stalls = 1;
    const report = await engine.run("route");
    expect(report).toMatchObject({ hit: false, replayed: 1, recorded: 2, stored: true, reason: expect.stringMatching(/move threw/) });
    expect(ran).toEqual(["a", "b", "c"]); // a ran once; b was retried by the agent
    expect(warnings.map((w) => w.kind)).toContain("tool-error");
    expect(store.size).toBe(2);
  });
});
