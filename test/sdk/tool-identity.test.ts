import { describe, expect, it } from "vitest";
import { Engine, MemoryStore, type EngineWarning } from "../../sdk/src/index.js";

// Issue 17, defects 5 and 7: which tool a recording names, and which instance a method replays on.

describe("Issue 17.5: tool identity and version", () => {
  it("Should refuse a function tool without an explicit name, since minifiers rename functions", () => {
    const engine = new Engine();
    const unnamed = { name: undefined } as unknown as { name: string };
    expect(() =>
      engine.function(unnamed, function greet(who: string) {
        return who;
      }),
    ).toThrow(/name.*minif/s);
  });

  it("Should not replay a recording of a tool whose body changed, and warn", async () => {
    const store = new MemoryStore();
    const dev = new Engine({ store, onWarning: () => {} });
    const wipe = dev.function({ name: "wipe" }, (table: string) => `DELETE FROM ${table}`);
    dev
      .setAgent(() => {
        wipe("users");
      })
      .finalize();
    await dev("clean up");

    const warnings: EngineWarning[] = [];
    const prod = new Engine({ store, onWarning: (w) => warnings.push(w) });
    const ran: string[] = [];
    const wipe2 = prod.function({ name: "wipe" }, (table: string) => {
      ran.push(table);
      return `DROP TABLE ${table}`;
    });
    let agentRuns = 0;
    prod
      .setAgent(() => {
        agentRuns++;
        wipe2("users");
      })
      .finalize();
    expect(await prod("clean up")).toBe(false);
    expect(agentRuns).toBe(1);
    expect(warnings.find((w) => w.kind === "tool-changed")?.message).toMatch(/wipe.*version/s);
  });

  it("Should keep replaying across builds when the version is explicit", async () => {
    const store = new MemoryStore();
    const dev = new Engine({ store, onWarning: () => {} });
    const greetDev = dev.function({ name: "greet", version: "1" }, function greet(who: string) {
      return `hi ${who}`;
    });
    dev
      .setAgent(() => {
        greetDev("ann");
      })
      .finalize();
    await dev("say hi");

    const prod = new Engine({ store, onWarning: () => {} });
    // what `esbuild --minify` makes of the same tool
    const re = prod.function({ name: "greet", version: "1" }, function re(e: string) {
      return `hi ${e}`;
    });
    prod
      .setAgent(() => {
        re("ann");
      })
      .finalize();
    expect(await prod("say hi")).toBe(true);
  });
});

describe("Issue 17.7: method tools replay on their own class's instance", () => {
  function setup() {
    const engine = new Engine({ onWarning: () => {} });
    const calls: string[] = [];
    class Arm {
      constructor(readonly id: string) {}
      @engine.method() lift(): void {
        calls.push(`lift on ${this.id}`);
      }
    }
    class Belt {
      constructor(readonly id: string) {}
      @engine.method() run(): void {
        calls.push(`run on ${this.id}`);
      }
    }
    return { engine, calls, Arm, Belt };
  }

  it("Should bind one context per class and replay each method on its own", async () => {
    const { engine, calls, Arm, Belt } = setup();
    const arm = new Arm("arm");
    const belt = new Belt("belt");
    engine
      .setAgent(() => {
        arm.lift();
        belt.run();
      })
      .setContext(arm)
      .setContext(belt)
      .finalize();
    await engine("move it");
    expect(await engine("move it")).toBe(true);
    expect(calls).toEqual(["lift on arm", "run on belt", "lift on arm", "run on belt"]);
  });

  it("Should refuse a class without a context, and a second instance of one class", () => {
    const { engine, Arm, Belt } = setup();
    expect(() => engine.setContext(new Arm("a")).setContext(new Arm("b"))).toThrow(/already replays on another instance/);
    void Belt;
    expect(() => engine.setAgent(() => {}).finalize()).toThrow(/setContext.*run/s);
  });

  it("Should not store a run that called a method on an instance that is not its context", async () => {
    const { engine, Arm, Belt } = setup();
    const main = new Arm("main");
    const spare = new Arm("spare");
    engine
      .setAgent(() => {
        spare.lift();
      })
      .setContext(main)
      .setContext(new Belt("b"))
      .finalize();
    expect(await engine.run("lift")).toMatchObject({ stored: false, reason: expect.stringMatching(/not its context/) });
  });
});
