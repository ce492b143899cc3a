import { describe, expect, it } from "vitest";
import { Check, Engine, MemoryStore } from "../../sdk/src/index.js";

// Issue 17, defect 9: misuses that only show at run time are thrown errors that say the fix.

describe("Issue 17.9: misuses are thrown errors with the fix", () => {
  it("Should reject a run whose synchronous tool has an async capture", async () => {
    const engine = new Engine({ onWarning: () => {} });
    const results: unknown[] = [];
    const hello = engine.function(
      {
        name: "hello",
        preCheck: new Check(
          async (n: string) => n,
          (a, b) => a === b,
        ),
      },
      (n: string) => `hi ${n}`,
    );
    engine
      .setAgent(() => {
        results.push(hello("ann"));
      })
      .finalize();
    await expect(engine("greet")).rejects.toThrow(/hello.*synchronous.*make the capture synchronous/is);
  });

  it("Should reject a run whose capture returns a Date or a class instance (a ported @dataclass)", async () => {
    class Snapshot {
      constructor(
        readonly name: string,
        readonly time: number,
      ) {}
    }
    const store = new MemoryStore();
    const engine = new Engine({ store, onWarning: () => {} });
    const dated = new Check(
      (n: string) => ({ n, at: new Date(0) }) as unknown as { n: string; at: number },
      (a, b) => a.n === b.n,
    );
    const hello = engine.function(
      {
        name: "hello",
        preCheck: new Check(
          (n: string) => new Snapshot(n, 1),
          (a, b) => a.name === b.name,
        ),
      },
      (_n: string) => {},
    );
    const bye = engine.function({ name: "bye", postCheck: dated }, (_n: string) => {});
    engine
      .setAgent((task) => {
        if (task === "hi") hello("ann");
        else bye("ann");
      })
      .finalize();
    await expect(engine("hi")).rejects.toThrow(/pre-check capture of hello.*instance of Snapshot.*plain/is);
    await expect(engine("bye")).rejects.toThrow(/post-check capture of bye.*Date.*getTime/is);
    expect(store.size).toBe(0);
  });

  it("Should throw when @engine.method is applied as a legacy (experimentalDecorators) decorator", () => {
    const engine = new Engine();
    const legacy = engine.method() as unknown as (target: object, key: string, descriptor: PropertyDescriptor) => unknown;
    const proto = {
      click() {
        return 1;
      },
    };
    expect(() => legacy(proto, "click", Object.getOwnPropertyDescriptor(proto, "click") as PropertyDescriptor)).toThrow(/experimentalDecorators/);
  });
});
