import { describe, expect, it } from "vitest";
import { summaryOf } from "../../dashboard/js/stale-summary.js";

describe("the stale-prune preview's sentence", () => {
  it("Should give one tree's learned templates as they are, and say a sum over several trees is one", () => {
    expect(summaryOf({ nodes: 4, answers: 2, templates: 2, trees: 1 }, false)).toBe("Would remove 4 nodes (2 answers, 2 learned templates) in 1 tree:");
    expect(summaryOf({ nodes: 4, answers: 1, templates: 1, trees: 1 }, true)).toBe("Would remove 4 nodes (1 answer, 1 learned template) in 1 tree:");
    expect(summaryOf({ nodes: 9, answers: 3, templates: 5, trees: 3 }, true)).toBe(
      "Would remove 9 nodes (3 answers, 5 learned templates across the 3 trees) in 3 trees:",
    );
  });
});
