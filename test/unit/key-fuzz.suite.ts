import { expect, it } from "vitest";
import { fuzz, missingPaths, type Allowed, type Json, type Outcome, type Path } from "./key-fuzz.support";

/** A JSON pointer (`/body/messages/2/content`) as a path, its array indexes as numbers. */
export const pathOf = (at: string): Path =>
  at
    .split("/")
    .slice(1)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));

/** What one API's fuzzer runs: its base request, its key, what may keep the key and why, what it adds, what the docs list. */
export interface FuzzSpec {
  base: Json;
  keyOf: (request: Json) => Outcome;
  allowed: Allowed;
  added: ReadonlyArray<[string, Json]>;
  documented: readonly string[];
  /** The fewest mutations a seed must make (the base is as wide as the API). */
  atLeast: number;
}

/**
 * The two checks every API's fuzzer makes, inside its `describe`: the base holds every documented field (or
 * adds it), and, per seed, every change of one field changes the key or bypasses unless it is allowed.
 */
export function fuzzSuite(spec: FuzzSpec): void {
  it("Should hold every documented field in the base request or among the added ones", () => {
    expect(missingPaths(spec.base, spec.documented, spec.added)).toEqual([]);
  });

  for (const seed of [1, 2, 3]) {
    it(`Should change the key, or bypass, for every change of one field but the allowed ones (seed ${seed})`, () => {
      const result = fuzz(spec.base, spec.keyOf, spec.allowed, seed, spec.added);
      expect(result.gaps).toEqual([]);
      expect(result.total).toBeGreaterThan(spec.atLeast);
      expect(result.changed).toBeGreaterThan(result.total / 2);
    });
  }
}
