import { describe, expect, it } from "vitest";
import { choose, DEFAULT_POLICY } from "../../src/cache/policy";
import { parsePolicy } from "../../src/config";

const answers = (...counts: number[]) => counts.map((observations) => ({ observations }));

describe("serving policy", () => {
  it("Should serve a single answer once seen under the default", () => {
    expect(choose(answers(1), DEFAULT_POLICY)).toBe(0);
  });

  it("Should go back to the model when siblings disagree under the default", () => {
    expect(choose(answers(5, 1), DEFAULT_POLICY)).toBeNull();
  });

  it("Should require k observations when configured", () => {
    const policy = parsePolicy("unanimous", "3");
    expect(choose(answers(2), policy)).toBeNull();
    expect(choose(answers(3), policy)).toBe(0);
  });

  it("Should serve a strict majority with k agreeing observations under majority", () => {
    const policy = parsePolicy("majority", "2");
    expect(choose(answers(1, 3), policy)).toBe(1);
    expect(choose(answers(2, 2), policy)).toBeNull();
    expect(choose(answers(1, 1, 1), parsePolicy("majority", "1"))).toBeNull();
  });

  it("Should fall back to the safe default on unknown settings", () => {
    expect(parsePolicy("yolo", "-4")).toEqual(DEFAULT_POLICY);
    expect(choose([], DEFAULT_POLICY)).toBeNull();
  });
});
