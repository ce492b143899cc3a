import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { api, login, newPage, OUT, openTree, skip, tapOrClick, treeId, useUsableDesk, walk, WIDTHS } from "./usable-desk";

interface Summary {
  hash: string;
  parent: string;
  depth: number;
  child_count: number;
}

/** The hash of the focused element (a tree item's data-hash), or null. */
const focused = (page: import("playwright-core").Page) => page.evaluate(() => document.activeElement?.getAttribute("data-hash") ?? null);

/**
 * A fork in headless Chromium at 390, 1024 and 1400 px: the same order refunded twice with different
 * amounts forks after the get_order call; its compare view marks what differs between the children,
 * the selected node's run is highlighted from the root, and the tree answers the ARIA tree keys.
 */
describe.skipIf(skip)("the dashboard at a fork: compare, the run's path, the keyboard", () => {
  useUsableDesk(async () => {
    await walk("refund", "A-1", 25);
    await walk("refund", "A-1", 40);
    await walk("refund", "B-22", 60);
  });

  it("Should list a fork's children with the differing part marked, highlight the run, and move by arrow keys, Home, End and Enter (all widths)", async () => {
    const all = (await api<{ data: Summary[] }>(`/trees/${treeId}/subtree`)).data;
    const fork = all.find((n) => n.child_count >= 2);
    if (!fork) throw new Error("the seed should make a fork below the root");
    const kids = all.filter((n) => n.parent === fork.hash);
    for (const size of WIDTHS) {
      const { page, errors, close } = await newPage(size);
      await login(page);
      await openTree(page, size.mobile);
      await tapOrClick(page, "#expand-all", size.mobile);
      await expect.poll(() => page.locator("#branch-status").textContent()).toBe(`Opened all ${all.length} nodes.`);
      await tapOrClick(page, `g.node[data-hash="${fork.hash}"]`, size.mobile);
      // Compare: every child, the amounts that differ marked.
      await expect.poll(() => page.locator("#fork-compare .compare-pick").count()).toBe(kids.length);
      const marks = await page.locator("#fork-compare mark").allTextContents();
      expect(marks.some((m) => m.includes("25"))).toBe(true);
      expect(marks.some((m) => m.includes("40"))).toBe(true);
      expect(marks.every((m) => m.length > 0 && m.length < 60)).toBe(true);
      // The run from the root to the selected node.
      expect(await page.locator("g.node.on-path").count()).toBe(fork.depth + 1);
      expect(await page.locator("path.edge.on-path").count()).toBe(fork.depth);
      await page.screenshot({ path: resolve(OUT, `fork-compare-${size.name}.png`) });
      // A pick selects that child.
      const picked = await page.locator("#fork-compare .compare-pick").nth(1).getAttribute("data-hash");
      await tapOrClick(page, `#fork-compare .compare-pick[data-hash="${picked}"]`, size.mobile);
      await page.locator("#node-panel p.hash", { hasText: picked ?? "?" }).waitFor();
      expect(await page.locator("g.node.on-path").count()).toBe(fork.depth + 2);
      await page.keyboard.press("Escape");
      // The keyboard: one item in the Tab order, the arrows, Home and End move it.
      expect(await page.locator('[role="treeitem"][tabindex="0"]').count()).toBe(1);
      await page.locator('[role="treeitem"][tabindex="0"]').focus();
      await page.keyboard.press("Home");
      expect(await focused(page)).toBe(treeId);
      await page.keyboard.press("ArrowDown");
      const first = await focused(page);
      const firstSummary = all.find((n) => n.hash === first);
      expect(firstSummary?.depth).toBe(1);
      await page.keyboard.press("ArrowRight"); // open already: to its first child
      const child = await focused(page);
      expect(all.find((n) => n.hash === child)?.parent).toBe(first);
      await page.keyboard.press("ArrowLeft"); // the child is open: closes it, the focus stays
      expect(await page.locator(`g.node[data-hash="${child}"]`).getAttribute("aria-expanded")).toBe("false");
      expect(await focused(page)).toBe(child);
      await page.keyboard.press("ArrowLeft"); // closed now: to the parent
      expect(await focused(page)).toBe(first);
      await page.keyboard.press("ArrowLeft"); // closes it
      expect(await page.locator(`g.node[data-hash="${first}"]`).getAttribute("aria-expanded")).toBe("false");
      expect(await focused(page)).toBe(first);
      await page.keyboard.press("ArrowRight"); // opens it
      expect(await page.locator(`g.node[data-hash="${first}"]`).getAttribute("aria-expanded")).toBe("true");
      await page.keyboard.press("End");
      const last = await focused(page);
      expect(all.some((n) => n.hash === last)).toBe(true);
      await page.keyboard.press("Enter");
      await page.locator("#node-panel p.hash", { hasText: last ?? "?" }).waitFor();
      expect(await page.locator(`g.node[data-hash="${last}"]`).getAttribute("aria-selected")).toBe("true");
      expect(errors).toEqual([]);
      await close();
    }
  });
});
