import { describe, expect, it } from "vitest";
import { Check, Engine, MemoryStore, type EngineOptions } from "../../sdk/src/index.js";
import { singleSteps } from "./support/steps.js";

// Issue 17, defect 8: whether a hit refreshes the stored snapshots (the original stored every hit,
// so a time-window check slid forward). Both are offered; the default keeps recordings as they are.

function greeter(options: EngineOptions) {
  const clock = { now: 0 };
  const store = new MemoryStore();
  const engine = new Engine({ ...options, store, onWarning: () => {} });
  const withinASecond = new Check(
    (name: string) => ({ name, at: clock.now }),
    (current, recorded) => current.at - recorded.at <= 1000,
  );
  const hello = engine.function({ name: "hello", preCheck: withinASecond }, (_name: string) => {});
  engine
    .setAgent((task) => {
      hello(task);
    })
    .finalize();
  return { engine, clock, store };
}

describe("Issue 17.8: hits and snapshots", () => {
  it("Should keep the recording as it was by default: the window does not slide", async () => {
    const { engine, clock, store } = greeter({});
    expect(await engine("erik")).toBe(false);
    clock.now = 600;
    expect(await engine.run("erik")).toMatchObject({ hit: true, stored: false });
    clock.now = 1200;
    expect(await engine("erik")).toBe(false);
    expect(store.size).toBe(2);
  });

  it('Should store the snapshots a hit observed with onHit: "refresh", so the window slides', async () => {
    const { engine, clock, store } = greeter({ onHit: "refresh" });
    expect(await engine("erik")).toBe(false);
    clock.now = 600;
    expect(await engine.run("erik")).toMatchObject({ hit: true, stored: true });
    clock.now = 1200;
    expect(await engine("erik")).toBe(true);
    expect(store.dump().map((t) => singleSteps(t)[0].pre)).toEqual([
      { name: "erik", at: 0 },
      { name: "erik", at: 600 },
      { name: "erik", at: 1200 },
    ]);
  });
});
