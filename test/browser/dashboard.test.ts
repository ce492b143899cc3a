import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { startTestUpstream } from "../../tools/test-upstream";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { browserSkip, launchChromium, requireChromium } from "./chromium";

/**
 * The dashboard in real headless Chromium against `wrangler dev` and the
 * scripted refund-desk model: real traffic, then browse, open, prune, and
 * check that the pruned request misses. Screenshots go to test-output/dashboard/.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const OUT = resolve(ROOT, "test-output/dashboard");
const KEY = "sk-dashboard-test";
const skip = browserSkip("the dashboard browser tests");

type Msg = { role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

let dev: WranglerDev;
let upstream: Awaited<ReturnType<typeof startTestUpstream>>;
let browser: Browser;

/** wrangler dev's own answer when it swapped in a new local runtime during a request (it retries only GET and HEAD itself). */
const DEV_RELOAD = "Your worker restarted mid-request";

async function chat(messages: Msg[], headers: Record<string, string> = {}, retried = false): Promise<{ cache: string | null; message: Msg }> {
  const res = await fetch(`${dev.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "gpt-4o-mini", tools: REFUND_TOOLS, messages }),
  });
  const text = await res.text();
  // Seen once in CI-like runs (cause not found: see the notes). The assertions that follow still count generations, so a retry hides no extra call.
  if (res.status === 503 && text.startsWith(DEV_RELOAD) && !retried) {
    console.warn(`[dashboard.test] wrangler dev reloaded its runtime mid-request; sending the request once more`);
    return chat(messages, headers, true);
  }
  const body = JSON.parse(text) as { choices: Array<{ message: Msg }> };
  if (res.status !== 200 && !headers["cache-control"]) throw new Error(`chat answered ${res.status}: ${JSON.stringify(body)}`);
  return { cache: res.headers.get("muscle-mem-cache"), message: body.choices?.[0]?.message };
}

/** Walks the refund desk for one order twice: once to learn (misses), once served (hits). */
async function converse(order: string, status: string, passes = 2): Promise<void> {
  for (let pass = 0; pass < passes; pass++) {
    const messages: Msg[] = [{ role: "user", content: `Please refund order #${order}` }];
    for (let turn = 0; turn < 3; turn++) {
      let reply = await chat(messages);
      for (let i = 0; pass >= 1 && reply.cache !== "hit" && i < 50; i++) {
        await new Promise((r) => setTimeout(r, 100));
        reply = await chat(messages);
      }
      const m = reply.message;
      messages.push({ role: "assistant", content: m.content, ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}) });
      if (!m.tool_calls) break;
      const result = m.tool_calls[0].function.name === "refund" ? { order_id: order, refunded: true } : { order_id: order, status, amount: 25 };
      messages.push({ role: "tool", tool_call_id: m.tool_calls[0].id, content: JSON.stringify(result) });
    }
  }
}

async function login(page: Page, key = KEY): Promise<void> {
  await page.goto(`${dev.url}/`);
  await page.fill("#token", key);
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector(".tree-card");
}

/**
 * Clicks (or taps) the tree node whose label contains `text` (the first such), then waits until the
 * node panel shows that very node. Each click starts its own panel fetch, and the last answer to
 * arrive fills the panel: without the wait, a quick second click could see its panel replaced by
 * the first node's, and a wait for `.call` or `.results` could match the wrong node's panel.
 */
async function clickNode(page: Page, text: string, tap = false): Promise<void> {
  const node = page.locator("g.node", { hasText: text }).first();
  const hash = await node.getAttribute("data-hash");
  const target = page.locator(`g.node[data-hash="${hash}"]`);
  if (tap) await target.tap();
  else await target.click();
  await page.locator("#node-panel p.hash", { hasText: hash ?? "" }).waitFor();
}

describe.skipIf(skip)("dashboard in headless Chromium", () => {
  beforeAll(async () => {
    requireChromium();
    mkdirSync(OUT, { recursive: true });
    upstream = await startTestUpstream(0);
    // Trees are seeded through tenant keys: the operator grants it (IMPORT_TENANTS).
    dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: upstream.url, HOT_CACHE_TTL_MS: "1000", IMPORT_TENANTS: "*" } });
    await converse("A-1", "delivered");
    await converse("B-2", "shipped");
    await converse("C-3", "delivered", 5);
    // Age the B-2 branch by 20 days (after the hit counters have been flushed), so the view shows it fading.
    await new Promise((r) => setTimeout(r, 1500));
    const aged = Date.now() - 20 * 86_400_000;
    await dev.sql(`UPDATE nodes SET created_at = ${aged}, last_hit_at = CASE WHEN last_hit_at IS NULL THEN NULL ELSE ${aged} END WHERE message LIKE '%B-2%'`);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await upstream?.close();
  });

  it("Should serve the vendored d3-hierarchy that matches the pinned package", async () => {
    const vendored = readFileSync(resolve(ROOT, "dashboard/vendor/d3-hierarchy.mjs"), "utf8");
    expect(vendored).toBe(readFileSync(resolve(ROOT, "node_modules/d3-hierarchy/dist/d3-hierarchy.min.mjs"), "utf8"));
    const served = await fetch(`${dev.url}/vendor/d3-hierarchy.mjs`);
    expect(served.status).toBe(200);
    expect((await fetch(`${dev.url}/build.mjs`)).status).not.toBe(200);
  });

  it("Should browse, open a node, prune its branch, and make the next identical request miss (laptop)", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await login(page);
    expect(await page.locator(".tree-card").count()).toBe(1);
    await expect.poll(() => page.locator("#overall").textContent()).toContain("hit rate");
    await page.click(".tree-card");
    await page.waitForSelector("g.node.role-user");
    expect(await page.locator("g.node.role-user").count()).toBe(3);
    await clickNode(page, "order #B-2");
    await clickNode(page, "order #C-3");
    await clickNode(page, "order #A-1");
    // All three branches open (their children load in any order), so that the first get_order() is A-1's.
    await expect.poll(() => page.locator("g.node.role-assistant").count()).toBe(3);
    await clickNode(page, "get_order()");
    await page.waitForSelector("#node-panel:not([hidden]) .call");
    expect(await page.locator("#node-panel .call").textContent()).toContain("get_order()");
    await clickNode(page, "delivered");
    await clickNode(page, "refund()");
    await page.waitForSelector("#node-panel .results pre.result");
    expect(await page.locator("#node-panel .results").textContent()).toContain("refunded");
    await clickNode(page, "refunded");
    await clickNode(page, "refund()");
    await page.waitForSelector("#node-panel .results pre.result");
    await page.evaluate(() => document.getElementById("branch-frame")?.scrollTo(0, 0));
    await page.screenshot({ path: resolve(OUT, "laptop-branch.png") });

    // Prune the A-1 answer (get_order) and everything under it.
    await clickNode(page, "get_order()");
    await page.waitForSelector("#node-panel .call");
    await page.click("#prune-node");
    await page.waitForSelector("#confirm-dialog[open]");
    await page.screenshot({ path: resolve(OUT, "laptop-confirm.png") });
    await page.click("#confirm-ok");
    await page.waitForSelector("#toast:not([hidden])");
    expect(await page.locator("#toast").textContent()).toMatch(/Pruned 5 nodes \(3 answers, \d+ templates?\)/);
    const before = upstream.generations();
    const next = await chat([{ role: "user", content: "Please refund order #A-1" }]);
    expect(next.cache).toBe("miss");
    expect(upstream.generations()).toBe(before + 1);
    const other = await chat([{ role: "user", content: "Please refund order #C-3" }]);
    expect(other.cache).toBe("hit");
    await page.close();
  });

  it("Should preview a stale prune, then run it", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await login(page);
    await page.click(".tree-card");
    await page.waitForSelector("g.node.role-user");
    await page.click("#stale-open");
    await page.fill("#stale-days", "0");
    await page.click("#stale-preview-btn");
    await page.waitForSelector("#stale-preview .summary");
    const summary = (await page.locator("#stale-preview .summary").textContent()) ?? "";
    expect(summary).toMatch(/Would remove \d+ nodes/);
    expect(await page.locator("#stale-preview .roots li").count()).toBeGreaterThan(0);
    await page.screenshot({ path: resolve(OUT, "laptop-stale-preview.png") });
    const wouldGo = Number(/remove (\d+) nodes/.exec(summary)?.[1]);
    await page.click("#stale-run");
    await page.waitForSelector("#toast:not([hidden])");
    expect(await page.locator("#toast").textContent()).toContain(`Pruned ${wouldGo} stale nodes`);
    const trees = (await (await fetch(`${dev.url}/api/trees`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
      data: Array<{ node_count: number }>;
    };
    expect(trees.data[0].node_count).toBe(0);
    const gone = await chat([{ role: "user", content: "Please refund order #C-3" }], { "cache-control": "only-if-cached" });
    // Not served: the only-if-cached 504 after a lookup is a miss (explained like any other, issue 26).
    expect(gone.cache).toBe("miss");
    await page.close();
  });

  it("Should be usable on a phone: tree list, then branch and node panel", async () => {
    await converse("D-4", "delivered");
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await login(page);
    await page.screenshot({ path: resolve(OUT, "phone-trees.png") });
    await page.tap(".tree-card");
    await page.waitForSelector("g.node.role-user");
    expect(await page.locator("#trees-pane").isVisible()).toBe(false);
    await clickNode(page, "order #D-4", true);
    await clickNode(page, "get_order()", true);
    await page.waitForSelector("#node-panel .call");
    await page.screenshot({ path: resolve(OUT, "phone-branch.png"), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await context.close();
  });
  it("Should page a wide level on demand: 50 children, then the rest behind a more… node", async () => {
    const lines = Array.from({ length: 60 }, (_, i) =>
      JSON.stringify({
        model: "gpt-4o-mini",
        tools: null,
        messages: [
          { role: "user", content: `wide question ${i}` },
          { role: "assistant", content: `answer ${i}` },
        ],
      }),
    ).join("\n");
    const imported = await fetch(`${dev.url}/api/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "muscle-mem-namespace": "wide" },
      body: lines,
    });
    expect(imported.status).toBe(200);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await login(page);
    await page.locator(".tree-card", { hasText: "wide" }).click();
    await page.waitForSelector("g.node.role-user");
    expect(await page.locator("g.node.role-user").count()).toBe(50);
    await page.locator("g.node.more").click();
    await expect.poll(() => page.locator("g.node.role-user").count()).toBe(60);
    expect(await page.locator("g.node.more").count()).toBe(0);
    await page.close();
  });

  it("Should show a Responses and a Gemini tree's calls with their arguments and the results in the node panel", async () => {
    const key = "sk-dashboard-providers";
    const responsesLine = {
      model: "rx-panel-model",
      params: { "muscle-mem:api": "openai-responses" },
      input: [
        { role: "user", content: "Refund order #R-7." },
        { type: "function_call", call_id: "call_0", name: "get_order", arguments: '{"order_id":"R-7"}' },
        { type: "function_call_output", call_id: "call_0", output: '{"status":"delivered"}' },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Order R-7 was delivered." }] },
      ],
    };
    const geminiLine = {
      model: "gemini-panel-model",
      params: { "muscle-mem:api": "gemini" },
      contents: [
        { role: "user", parts: [{ text: "Refund order #G-8." }] },
        { role: "model", parts: [{ text: "Looking it up." }, { functionCall: { name: "get_order", args: { order_id: "G-8" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_order", response: { status: "lost" } } }] },
        { role: "model", parts: [{ text: "Order G-8 is lost." }] },
      ],
    };
    const body = [responsesLine, geminiLine].map((l) => JSON.stringify(l)).join("\n");
    const imported = await fetch(`${dev.url}/api/import`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body });
    expect(imported.status).toBe(200);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await login(page, key);
    for (const [model, order, call, result] of [
      ["rx-panel-model", "#R-7", "→ get_order()", "delivered"],
      ["gemini-panel-model", "#G-8", "Looking it up.", "lost"],
    ]) {
      await page.locator(".tree-card", { hasText: model }).click();
      await page.waitForSelector("g.node.role-user");
      await clickNode(page, order);
      await clickNode(page, call);
      await page.waitForSelector("#node-panel .call");
      expect(await page.locator("#node-panel .call strong").textContent()).toBe("get_order()");
      expect(await page.locator("#node-panel .call pre.json").textContent()).toContain(`"order_id": "${order.slice(1)}"`);
      expect(await page.locator("#node-panel").textContent()).not.toContain("(empty message)");
      await page.waitForSelector("#node-panel .results pre.result");
      expect(await page.locator("#node-panel .results").textContent()).toContain(result);
    }
    await page.close();
  });
});
