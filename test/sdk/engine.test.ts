import { describe, expect, it } from "vitest";
import { Check, Engine, MemoryStore, type EngineWarning, type Trajectory, type TrajectoryStore } from "../../sdk/src/index.js";
import { singleSteps } from "./support/steps.js";

function quiet(store?: TrajectoryStore) {
  const warnings: EngineWarning[] = [];
  return { engine: new Engine({ store, onWarning: (w) => warnings.push(w) }), warnings };
}

describe("Engine setup", () => {
  it("Should refuse to run without tools, without an agent, or without a context for method tools", async () => {
    await expect(new Engine().run("x")).rejects.toThrow(/register a tool/);
    const noAgent = new Engine();
    noAgent.function({ name: "f" }, () => 1);
    expect(() => noAgent.finalize()).toThrow(/setAgent/);
    const noContext = new Engine();
    class C {
      @noContext.method() m() {
        return 1;
      }
    }
    void C;
    expect(() => noContext.setAgent(() => {}).finalize()).toThrow(/setContext/);
  });

  it("Should refuse changes after finalize, and duplicate tool names", () => {
    const engine = new Engine();
    engine.function({ name: "f" }, () => 1);
    expect(() => engine.function({ name: "f" }, () => 2)).toThrow(/already registered/);
    engine.setAgent(() => {}).finalize();
    expect(() => engine.function({ name: "g" }, () => 1)).toThrow(/finalized/);
    expect(() => engine.setAgent(() => {})).toThrow(/finalized/);
  });

  it("Should store each step with its tool's version, by default a hash of its source", async () => {
    const store = new MemoryStore();
    const e = new Engine({ store });
    const f = e.function({ name: "f" }, (x: number) => x + 1);
    const g = e.function({ name: "g", version: "2" }, (x: number) => x + 2);
    e.setAgent(() => {
      f(1);
      g(1);
    }).finalize();
    await e("t");
    expect(singleSteps(store.dump()[0]).map((s) => s.version)).toEqual([expect.stringMatching(/^src:[0-9a-f]{12}$/), "2"]);
  });
});

describe("Engine recording", () => {
  it("Should keep a synchronous tool synchronous, in and out of runs", async () => {
    const { engine } = quiet();
    const add = engine.function(
      {
        name: "add",
        postCheck: new Check(
          (a: number) => a,
          (x, y) => x === y,
        ),
      },
      (a: number, b: number) => a + b,
    );
    let inside: unknown;
    engine
      .setAgent(() => {
        inside = add(1, 2);
      })
      .finalize();
    expect(add(2, 3)).toBe(5);
    await engine("sum");
    expect(inside).toBe(3);
  });

  it("Should record async tools and async captures, and replay them in order", async () => {
    const store = new MemoryStore();
    const { engine } = quiet(store);
    const order: string[] = [];
    const tick = () => new Promise((r) => setTimeout(r, 2));
    const fetchPage = engine.function(
      {
        name: "fetchPage",
        preCheck: new Check(
          async (url: string) => {
            await tick();
            return url.length;
          },
          (a, b) => a === b,
        ),
      },
      async (url: string) => {
        await tick();
        order.push(url);
        return `<html>${url}</html>`;
      },
    );
    engine
      .setAgent(async () => {
        await fetchPage("/a");
        await fetchPage("/bb");
      })
      .finalize();
    expect(await engine("crawl")).toBe(false);
    expect(await engine("crawl")).toBe(true);
    expect(order).toEqual(["/a", "/bb", "/a", "/bb"]);
    expect(singleSteps(store.dump()[0]).map((s) => [s.pre, s.result])).toEqual([
      [2, "<html>/a</html>"],
      [3, "<html>/bb</html>"],
    ]);
  });

  it("Should record only the outer call when a tool calls another tool", async () => {
    const store = new MemoryStore();
    const { engine } = quiet(store);
    const inner = engine.function({ name: "inner" }, (x: number) => x * 2);
    const outer = engine.function({ name: "outer" }, (x: number) => inner(x) + 1);
    engine
      .setAgent(() => {
        outer(1);
      })
      .finalize();
    await engine("nested");
    expect(singleSteps(store.dump()[0]).map((s) => s.tool)).toEqual(["outer"]);
  });

  it("Should keep concurrent runs of one engine apart", async () => {
    const store = new MemoryStore();
    const { engine } = quiet(store);
    const say = engine.function({ name: "say" }, async (word: string) => {
      await new Promise((r) => setTimeout(r, 3));
      return word;
    });
    engine
      .setAgent(async (task) => {
        for (const w of task.split(" ")) await say(w);
      })
      .finalize();
    await Promise.all([engine("a b c"), engine("x y")]);
    const byTask = Object.fromEntries(store.dump().map((t) => [t.task, singleSteps(t).map((s) => s.result)]));
    expect(byTask).toEqual({ "a b c": ["a", "b", "c"], "x y": ["x", "y"] });
  });

  it("Should store nothing when the agent throws, and rethrow", async () => {
    const store = new MemoryStore();
    const { engine } = quiet(store);
    const f = engine.function({ name: "f" }, () => 1);
    engine
      .setAgent(() => {
        f();
        throw new Error("agent failed");
      })
      .finalize();
    await expect(engine("t")).rejects.toThrow("agent failed");
    expect(store.size).toBe(0);
  });

  it("Should not store a run in which a tool threw or a capture failed", async () => {
    const store = new MemoryStore();
    const { engine, warnings } = quiet(store);
    const flaky = engine.function({ name: "flaky" }, (fail: boolean) => {
      if (fail) throw new Error("boom");
    });
    const blind = engine.function(
      {
        name: "blind",
        preCheck: new Check(
          () => {
            throw new Error("no camera");
          },
          () => true,
        ),
      },
      () => "ran",
    );
    engine
      .setAgent((task) => {
        if (task === "tool") {
          try {
            flaky(true);
          } catch {
            /* the agent copes */
          }
        } else expect(blind()).toBe("ran");
      })
      .finalize();
    expect(await engine.run("tool")).toMatchObject({ stored: false, reason: "tool flaky threw" });
    expect(await engine.run("capture")).toMatchObject({ stored: false, reason: expect.stringContaining("no camera") });
    expect(store.size).toBe(0);
    expect(warnings.map((w) => w.kind)).toEqual(["not-storable", "not-storable"]);
  });
});

describe("Engine replay", () => {
  it("Should fail open when the store cannot be read or written", async () => {
    const broken: TrajectoryStore = {
      query: () => Promise.reject(new Error("down")),
      add: () => Promise.reject(new Error("down")),
    };
    const { engine, warnings } = quiet(broken);
    const f = engine.function({ name: "f" }, () => 1);
    engine
      .setAgent(() => {
        f();
      })
      .finalize();
    expect(await engine.run("t")).toMatchObject({ hit: false, stored: false, reason: "store failed" });
    expect(warnings.map((w) => w.kind)).toEqual(["store-query", "store-add"]);
  });

  it("Should treat a compare that throws as a mismatch", async () => {
    const { engine, warnings } = quiet();
    let explode = false;
    const f = engine.function(
      {
        name: "f",
        preCheck: new Check(
          () => 1,
          () => {
            if (explode) throw new Error("bad compare");
            return true;
          },
        ),
      },
      () => 1,
    );
    engine
      .setAgent(() => {
        f();
      })
      .finalize();
    await engine("t");
    explode = true;
    expect(await engine("t")).toBe(false);
    expect(warnings.map((w) => w.kind)).toContain("check-error");
  });

  it("Should replay the candidate with the best score", async () => {
    const screen = { brightness: 0.8 };
    const recorded = (id: string, brightness: number, tool: string): Trajectory => ({
      id,
      key: { task: "t" },
      task: "t",
      recordedAt: 1,
      steps: [{ tool, version: "1", args: [], pre: brightness }],
    });
    const { engine } = quiet(new MemoryStore([recorded("dim", 0.5, "dim"), recorded("bright", 0.75, "bright")]));
    const check = new Check(
      () => screen.brightness,
      (a, b) => 1 - Math.abs(a - b),
      { threshold: 0.6 },
    );
    const ran: string[] = [];
    engine.function({ name: "dim", version: "1", preCheck: check }, () => {
      ran.push("dim");
    });
    engine.function({ name: "bright", version: "1", preCheck: check }, () => {
      ran.push("bright");
    });
    engine.setAgent(() => {}).finalize();
    expect(await engine("t")).toBe(true);
    expect(ran).toEqual(["bright"]);
  });

  it("Should hand over to the agent when a replayed tool throws, and reject when its retry throws too", async () => {
    const store = new MemoryStore();
    const { engine } = quiet(store);
    let broken = false;
    const f = engine.function({ name: "f" }, () => {
      if (broken) throw new Error("motor stalled");
    });
    engine
      .setAgent(() => {
        f();
      })
      .finalize();
    await engine("t");
    broken = true;
    await expect(engine("t")).rejects.toThrow("motor stalled");
    expect(store.size).toBe(1);
  });

  it("Should skip recordings of tools this engine does not have", async () => {
    const stranger: Trajectory = { id: "s", key: { task: "t" }, task: "t", recordedAt: 1, steps: [{ tool: "gone", args: [] }] };
    const { engine } = quiet(new MemoryStore([stranger]));
    let agentRuns = 0;
    engine.function({ name: "f" }, () => 1);
    engine
      .setAgent(() => {
        agentRuns++;
      })
      .finalize();
    expect(await engine("t")).toBe(false);
    expect(agentRuns).toBe(1);
  });
});
