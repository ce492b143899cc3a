import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Check, judge, NotSerialisableError } from "../../sdk/src/index.js";
import { canonicalJson, decodeValue, encodeValue } from "../../sdk/src/json.js";
import { Binder, encodeArgs, skillKey } from "../../sdk/src/steps.js";
import type { StepArg, Trajectory } from "../../sdk/src/index.js";

describe("encodeValue / decodeValue", () => {
  it("Should round-trip any JSON-like value through JSON text, undefined and NaN included", () => {
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(fc.constant(undefined), fc.constant(null), fc.boolean(), fc.double(), fc.string()),
      node: fc.oneof(
        { depthSize: "small" },
        tie("leaf"),
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(fc.oneof(fc.string(), fc.constant("$mm"), fc.constant("__proto__")), tie("node"), {
          maxKeys: 4,
          noNullPrototype: true,
        }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const text = JSON.stringify(encodeValue(v));
        expect(decodeValue(JSON.parse(text))).toStrictEqual(v);
      }),
      { numRuns: 1000 },
    );
  });

  it("Should refuse values it cannot restore faithfully", () => {
    for (const bad of [() => 1, Symbol("s"), 1n, new Date(0), new Map(), new Uint8Array(2)]) {
      expect(() => encodeValue([bad])).toThrow(NotSerialisableError);
    }
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(() => encodeValue(cyclic)).toThrow(/cycle/);
  });

  it("Should allow the same object twice when it is not a cycle", () => {
    const shared = { a: 1 };
    expect(decodeValue(encodeValue([shared, shared]))).toStrictEqual([{ a: 1 }, { a: 1 }]);
  });

  it("Should give equal canonical JSON to objects that differ only in key order", () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe(canonicalJson({ a: { c: 3, d: 2 }, b: 1 }));
  });
});

describe("params in arguments", () => {
  it("Should store an argument equal to a param with its value and the param as a candidate, bound once proven", () => {
    const args = encodeArgs(["Ada", 3, true, { id: "A-1" }], { name: "Ada", flag: true, order: { id: "A-1" } });
    expect(args).toEqual([{ value: "Ada", param: "name" }, { value: 3 }, { value: true }, { value: { id: "A-1" }, param: "order" }]);
    const steps = (a: StepArg[]): Trajectory => ({ id: "t", key: { task: "x" }, task: "x", recordedAt: 1, steps: [{ tool: "f", args: a }] });
    const first = steps(args);
    const second = steps(encodeArgs(["Cy", 3, true, { id: "C-3" }], { name: "Cy", order: { id: "C-3" } }));
    const next = { name: "Bob", order: { id: "B-2" } };
    expect(new Binder([first], next).args(first.steps, 0)).toBeUndefined(); // one recording proves nothing
    expect(new Binder([first, second], next).args(first.steps, 0)).toEqual(["Bob", 3, true, { id: "B-2" }]);
    expect(new Binder([first, second], { name: "Bob" }).args(first.steps, 0)).toBeUndefined(); // a missing param
    expect(new Binder([first], { name: "Ada", order: { id: "A-1" } }).args(first.steps, 0)).toEqual(["Ada", 3, true, { id: "A-1" }]);
  });

  it("Should key a run by its sorted tags, or by its task with params templated out", () => {
    expect(skillKey("x", ["b", "a", "b"], {})).toEqual({ tags: ["a", "b"] });
    expect(skillKey("greet Ada at Ada's", [], { name: "Ada", n: 3 })).toEqual({ task: "greet {{name}} at {{name}}'s" });
  });
});

describe("Check", () => {
  it("Should judge booleans as they are and numbers against the threshold", () => {
    expect(judge(true, 0.9)).toEqual({ pass: true, score: 1 });
    expect(judge(false, 0)).toEqual({ pass: false, score: 0 });
    expect(judge(0, 0.5).pass).toBe(false);
    expect(judge(0.49, 0.5).pass).toBe(false);
    expect(judge(0.5, 0.5).pass).toBe(true);
    expect(judge(1, 1).pass).toBe(true);
    for (const odd of [Number.NaN, -0.1, 1.01, Infinity, "1", undefined, null, {}]) expect(judge(odd, 0).pass).toBe(false);
  });

  it("Should default the threshold to 0.9 and refuse thresholds outside [0, 1]", () => {
    const check = new Check(
      () => 1,
      () => 0.89,
    );
    expect(check.threshold).toBe(0.9);
    expect(check.judge(0.89).pass).toBe(false);
    expect(
      () =>
        new Check(
          () => 1,
          () => true,
          { threshold: 2 },
        ),
    ).toThrow(RangeError);
  });
});
