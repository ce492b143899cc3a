import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadInputs, report } from "../../scripts/capacity";

describe("npm run capacity", () => {
  it("prints, from the committed inputs, exactly the tables of docs/capacity.md", () => {
    const { counts, platform } = loadInputs();
    const doc = readFileSync(resolve(import.meta.dirname, "../../docs/capacity.md"), "utf8").split("\n");
    const missing = report(counts, platform)
      .split("\n")
      .filter((line) => line.trim() !== "" && !doc.includes(line));
    expect(missing).toEqual([]);
  });
});
