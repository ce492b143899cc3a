import { describe, expect, it } from "vitest";
import {
  ANTHROPIC,
  CHAT,
  GEMINI,
  LONG_ANSWER,
  OUT,
  RESPONSES,
  dev,
  emptyList,
  explained,
  importLines,
  send,
  signedIn,
  skip,
  useHuntDesk,
} from "./dash-hunt-desk";

/**
 * The dashboard under traffic of every API (Chat Completions, Messages, Responses, Gemini), as an operator uses
 * it: Why it missed for a request that goes on past the recorded path (no recorded message to compare, so the
 * explanation's `field` is null) names the request's item on its own API, and a long field name in the request
 * log wraps inside the side pane. Headless Chromium against `wrangler dev` (test/browser/dash-hunt-desk.ts).
 */
const NEXT = { chat: { role: "user", content: "Thanks. One more: order #C-2?" } };
/** A field name longer than the side pane is wide, with no place to break it. */
const LONG_FIELD = "refund_destination_account_reference_for_the_ledger";

describe.skipIf(skip)("the dashboard hunted under every API", () => {
  useHuntDesk(async () => {
    // One message past each recorded conversation: a new branch whose fork has no recorded child.
    await send.chat([...CHAT.messages, NEXT.chat], "hunt-chat-past");
    await send.anthropic([...ANTHROPIC.messages, { role: "user", content: "Thanks. One more: order #A-2?" }], "hunt-claude-past");
    await send.responses([...RESPONSES.input, { role: "user", content: "Thanks. One more: order #R-2?" }], "hunt-rx-past");
    await send.gemini([...GEMINI.contents, { role: "user", parts: [{ text: "Thanks. One more: order #G-2?" }] }], "hunt-gemini-past");
    // A tool result that differs in a long field: the log names it in full.
    const result = { functionResponse: { name: "get_order", response: { order_id: "G-1", status: "delivered", [LONG_FIELD]: "x" } } };
    await send.gemini([...GEMINI.contents.slice(0, 2), { role: "user", parts: [result] }], "hunt-gemini-long");
    // A long agent run: 30 turns deep.
    const turns = Array.from({ length: 15 }, (_, i) => [
      { role: "user", content: `Step ${i + 1}: please check the next item of order #D-1 for me.` },
      { role: "assistant", content: `Step ${i + 1} checked: item ${i + 1} of order D-1 is fine.` },
    ]).flat();
    await importLines([{ model: "hunt-deep", tools: null, messages: turns }]);
    for (const id of ["hunt-chat-past", "hunt-claude-past", "hunt-rx-past", "hunt-gemini-past", "hunt-gemini-long"]) await explained(id);
  });

  it("Should name the new item on the request's own API when nothing is recorded past the fork, never a guessed messages[i]", async () => {
    const { page, errors, close } = await signedIn();
    for (const [id, field, title, line] of [
      ["hunt-chat-past", "messages[5]", "messages[5] (user)", "message 6 goes past the recorded path"],
      ["hunt-claude-past", "messages[4]", "messages[4] (user)", "message 5 goes past the recorded path"],
      // A Responses run of items and consecutive Gemini model contents are one message: the item cannot be told.
      ["hunt-rx-past", "input[*]", "input[*] (user)", "message 5 goes past the recorded path"],
      ["hunt-gemini-past", "contents[*]", "contents[*] (user)", "message 5 goes past the recorded path"],
    ]) {
      await page.goto(`${dev.url}/?request=${id}`);
      await page.waitForFunction((rid) => document.querySelector("#node-panel:not([hidden]) .request-id")?.textContent === rid, id);
      expect(await page.locator("#why-field").textContent()).toBe(field);
      expect(await page.locator(".why-field").textContent()).toContain("the recorded path ends before it");
      expect(await page.locator(".compare-side.incoming h3").textContent()).toBe(`This request · ${title}`);
      await page.locator("#requests-pane .request", { hasText: line }).first().waitFor();
      if (id === "hunt-rx-past") await page.screenshot({ path: `${OUT}/dash-hunt-why-past.png` });
    }
    expect(await page.locator("#requests-pane").textContent()).not.toContain("at depth");
    // Where the field places the item exactly, the column says which one.
    await page.goto(`${dev.url}/?request=hunt-gemini-long`);
    await page.waitForFunction(() => document.querySelector("#node-panel:not([hidden]) .request-id")?.textContent === "hunt-gemini-long");
    expect(await page.locator("#why-field").textContent()).toBe(`contents[2].parts[0].functionResponse.response.${LONG_FIELD}`);
    expect(await page.locator(".compare-side.incoming h3").textContent()).toBe("This request · contents[2] (user)");
    expect(errors).toEqual([]);
    await close();
  });

  it("Should wrap a long field name in the request log inside the side pane, at 1400 and 1024 px", async () => {
    for (const width of [1400, 1024]) {
      const { page, errors, close } = await signedIn(width, 800);
      const line = page.locator("#requests-pane .request", { hasText: LONG_FIELD });
      await line.waitFor();
      const pane = await page.evaluate(() => {
        const p = document.getElementById("trees-pane") as HTMLElement;
        return { scroll: p.scrollWidth, client: p.clientWidth };
      });
      expect(pane.scroll).toBeLessThanOrEqual(pane.client);
      const box = await line.boundingBox();
      const side = await page.locator("#trees-pane").boundingBox();
      expect(box && side && box.x + box.width <= side.x + side.width).toBe(true);
      if (width === 1024) await page.screenshot({ path: `${OUT}/dash-hunt-long-field.png` });
      expect(errors).toEqual([]);
      await close();
    }
  });

  it("Should list a Gemini tree's function names on its card, as every other API's, never a ?", async () => {
    const { page, errors, close } = await signedIn();
    for (const model of [CHAT.model, ANTHROPIC.model, RESPONSES.model, GEMINI.model]) {
      const chips = await page
        .locator(".tree-card", { has: page.locator(`strong:text-is("${model}")`) })
        .locator(".chips .chip")
        .allTextContents();
      expect(chips, model).toEqual(["get_order"]);
    }
    expect(errors).toEqual([]);
    await close();
  });

  it("Should label a long Anthropic text answer by its text in the tree and the panel, never by its raw JSON blocks", async () => {
    const { page, errors, close } = await signedIn();
    await page.locator(".tree-card", { has: page.locator(`strong:text-is("${ANTHROPIC.model}")`) }).click();
    await page.click("#expand-all");
    // Expand all says how many it opened once they are drawn (the import's 4 nodes, and the 2 hunt-claude-past recorded).
    await page.waitForSelector("text=Opened all 6 nodes.");
    expect(await page.locator("g.node.role-assistant text", { hasText: "Order A-1 is refunded." }).count()).toBe(1);
    expect(await page.locator("g.node").allTextContents()).not.toContainEqual(expect.stringContaining('[{"'));
    // The node's tooltip is its preview: the text, cut at 160 characters.
    const title = await page.locator("g.node.role-assistant", { hasText: "Order A-1 is refunded." }).locator("title").textContent();
    expect(title).toContain(LONG_ANSWER.slice(0, 150).trim());
    await page.locator("g.node.role-assistant", { hasText: "Order A-1 is refunded." }).click();
    await page.waitForSelector("#node-panel:not([hidden])");
    // The panel opens with "Loading…" and fills once the node's read answers.
    await expect.poll(() => page.locator("#node-panel").textContent()).toContain(LONG_ANSWER.trim());
    await page.screenshot({ path: `${OUT}/dash-hunt-anthropic-long.png` });
    expect(errors).toEqual([]);
    await close();
  });

  it("Should keep the path bar of a 30-deep node to a root, a '… N more' and the last crumbs, and show them all on a click", async () => {
    for (const width of [1400, 375]) {
      const { page, errors, close } = await signedIn(width, 800);
      if (width === 375) await page.locator(".tree-card", { has: page.locator('strong:text-is("hunt-deep")') }).tap();
      else await page.locator(".tree-card", { has: page.locator('strong:text-is("hunt-deep")') }).click();
      await page.fill("#branch-search", "item 15 of order D-1");
      await page.press("#branch-search", "Enter");
      await page.waitForSelector("#node-panel:not([hidden])");
      const bar = page.locator("#branch-path");
      await expect.poll(() => bar.locator("button").first().textContent()).toBe("root");
      // root, … 26 more, the last 4 (the selected answer last): at most two lines.
      expect(await bar.locator("button").count()).toBe(6);
      expect(await bar.locator("button.more").textContent()).toBe("… 26 more");
      expect(await bar.locator("button").last().textContent()).toContain("Step 15 checked");
      const box = await bar.boundingBox();
      expect(box?.height ?? Infinity).toBeLessThanOrEqual(width === 375 ? 100 : 50);
      if (width === 375) await page.screenshot({ path: `${OUT}/dash-hunt-deep-path-phone.png` });
      await bar.locator("button.more").click();
      expect(await bar.locator("button").count()).toBe(31);
      // A crumb still selects its node.
      await bar.locator("button").nth(3).click();
      await expect.poll(() => page.locator("#node-panel").textContent()).toContain("Step 2: please check");
      expect(errors).toEqual([]);
      await close();
    }
  });

  it("Should move the focus to the tree when a tree card is opened from the keyboard, so the arrow keys work at once", async () => {
    const { page, errors, close } = await signedIn();
    await page.locator(".tree-card", { has: page.locator(`strong:text-is("${CHAT.model}")`) }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("role"))).toBe("treeitem");
    // The root, open with its one child (the system message): ↓ goes to it, → opens it.
    const drawn = await page.$("#branch-frame svg");
    await page.keyboard.press("ArrowDown");
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-level"))).toBe("2");
    // Only the tab stop moved: the tree was not drawn again for a focus move (a 400-node redraw per key).
    expect(await drawn?.evaluate((svg) => svg.isConnected)).toBe(true);
    expect(await page.locator('#branch-frame [role="treeitem"][tabindex="0"]').count()).toBe(1);
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-expanded"))).toBe("true");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(`system: You are the dash-hunt refund desk.`);
    // A mouse click leaves the focus where it was (a click on the card).
    await page.locator(".tree-card", { has: page.locator(`strong:text-is("${GEMINI.model}")`) }).click();
    await page.waitForFunction(() => document.getElementById("branch-title")?.textContent?.startsWith("hunt-gemini"));
    expect(await page.evaluate(() => document.activeElement?.classList.contains("tree-card"))).toBe(true);
    expect(errors).toEqual([]);
    await close();
  });

  it("Should clear 'Opened all N nodes.' once a prune has changed the tree", async () => {
    const { page, errors, close } = await signedIn();
    await page.locator(".tree-card", { has: page.locator('strong:text-is("hunt-deep")') }).click();
    await page.click("#expand-all");
    await page.waitForSelector("text=Opened all 30 nodes.");
    await page.locator("g.node.role-user", { hasText: "Step 15: please" }).click();
    await page.click("text=Prune this branch");
    await page.locator("dialog[open] button", { hasText: /^Prune$/ }).click();
    await page.waitForSelector("text=Pruned 2 nodes");
    expect(await page.locator("g.node").count()).toBe(29);
    expect(await page.locator("#branch-status").textContent()).toBe("");
    expect(errors).toEqual([]);
    await close();
  });

  it("Should say so when a shared link names a request the log does not hold, instead of showing nothing", async () => {
    const { page, errors, close } = await signedIn();
    await page.goto(`${dev.url}/?request=hunt-aged-out`);
    await expect.poll(() => page.locator("#toast").textContent()).toBe("No request hunt-aged-out in the log: each tree keeps its newest 200 requests.");
    expect(await page.locator("#node-panel").isHidden()).toBe(true);
    // The one console line is the browser's own for the API's 404.
    expect(errors.filter((e) => !e.includes("404"))).toEqual([]);
    await close();
  });

  it("Should say a tree is empty once a stale prune has removed every node, instead of a lone unexplained root", async () => {
    const { page, errors, close } = await signedIn();
    await page.locator(".tree-card", { has: page.locator('strong:text-is("hunt-deep")') }).click();
    await page.waitForFunction(() => document.querySelectorAll("g.node").length > 1);
    await page.click("#stale-open");
    await page.fill("#stale-days", "0");
    await page.click("#stale-dialog button:text-is('Preview')");
    await page.waitForSelector("#stale-preview >> text=Would remove 28 nodes");
    await page.click("#stale-run");
    await page.waitForSelector("text=Pruned 28 stale nodes");
    await expect.poll(() => page.locator("#branch-status").textContent()).toContain("Nothing is recorded in this tree");
    expect(await page.locator("g.node").count()).toBe(1);
    expect(await page.locator(".tree-card.active").textContent()).toContain("0 nodes");
    expect(errors).toEqual([]);
    await close();
  });

  it("Should tell the admin of an empty database how trees come, on every API, not Chat Completions alone", () => {
    // Seen before the import (useHuntDesk): the admin's tree list at 375 px.
    expect(emptyList).toContain("No trees yet.");
    for (const route of ["/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1beta/models/", "POST /api/import"]) expect(emptyList).toContain(route);
  });
});
