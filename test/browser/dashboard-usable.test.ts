import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { startTestUpstream } from "../../tools/test-upstream";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

/**
 * The dashboard a newcomer meets, in headless Chromium against `wrangler dev`
 * and the scripted refund desk, at 390, 1024 and 1400 px: a prune that takes
 * only the templates learned from its branch, who you are, the node panel on
 * every width, search and expand-all, recent requests, and no console errors.
 * Screenshots go to test-output/dashboard/.
 */
const CHROMIUM = "/usr/bin/chromium";
const OUT = resolve(import.meta.dirname, "../../test-output/dashboard");
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const KEY = "sk-usable-test";
const ADMIN = "dev-admin-token";
const skip = !existsSync(CHROMIUM) && process.env.MM_SKIP_BROWSER === "1";
if (skip) console.warn(`[browser] ${CHROMIUM} is missing and MM_SKIP_BROWSER=1: skipping the dashboard browser tests.`);

type Msg = { role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };
interface Template { id: string; confirmed: boolean; slots: Array<{ values: string[] }> }
export const WIDTHS = [
  { name: "phone", width: 390, height: 844, mobile: true },
  { name: "laptop", width: 1024, height: 768, mobile: false },
  { name: "desktop", width: 1400, height: 900, mobile: false },
] as const;

let dev: WranglerDev;
let upstream: Awaited<ReturnType<typeof startTestUpstream>>;
let browser: Browser;
let treeId = "";

async function api<T>(path: string, token = KEY): Promise<T> {
  const res = await fetch(`${dev.url}/api${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** Walks the refund desk for one order to the end (`verb` picks the branch: "refund" or "cancel"; lower case, so that it stays structural). */
async function walk(verb: string, order: string, amount: number): Promise<void> {
  const messages: Msg[] = [{ role: "user", content: `please ${verb} order #${order}` }];
  for (let turn = 0; turn < 4; turn++) {
    const res = await fetch(`${dev.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", tools: REFUND_TOOLS, messages }),
    });
    const body = (await res.json()) as { choices: Array<{ message: Msg }> };
    if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${JSON.stringify(body)}`);
    const m = body.choices[0].message;
    messages.push({ role: "assistant", content: m.content, ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}) });
    if (!m.tool_calls) break;
    const result = m.tool_calls[0].function.name === "refund" ? { order_id: order, refunded: true } : { order_id: order, status: "delivered", amount };
    messages.push({ role: "tool", tool_call_id: m.tool_calls[0].id, content: JSON.stringify(result) });
    // Learning runs after the response: give it a moment, as an agent calling its tool would.
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Polls until `done` holds (learning and counting run after the response). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 200 && !done(v); i++) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  if (!done(v)) throw new Error(`never got there: ${JSON.stringify(v)}`);
  return v;
}

/** A page that records console errors and failed requests. */
async function newPage(size: (typeof WIDTHS)[number]): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, isMobile: size.mobile, hasTouch: size.mobile, deviceScaleFactor: size.mobile ? 2 : 1 });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, errors, close: () => context.close() };
}

async function login(page: Page, token = KEY): Promise<void> {
  await page.goto(`${dev.url}/`);
  await page.fill("#token", token);
  await page.click("#login-form button[type=submit]");
}

async function openTree(page: Page, mobile: boolean): Promise<void> {
  await page.waitForSelector(".tree-card");
  if (mobile) await page.locator(".tree-card").first().tap();
  else await page.locator(".tree-card").first().click();
  await page.waitForSelector("g.node.role-user");
}

async function tapOrClick(page: Page, selector: string, mobile: boolean): Promise<void> {
  if (mobile) await page.locator(selector).first().tap();
  else await page.locator(selector).first().click();
}

describe.skipIf(skip)("the dashboard on real trees and small screens", () => {
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set MM_SKIP_BROWSER=1 to skip on purpose)`);
    mkdirSync(OUT, { recursive: true });
    upstream = await startTestUpstream(0);
    dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: upstream.url, HOT_CACHE_TTL_MS: "1000", COUNTER_FLUSH_MS: "200" } });
    for (const [order, amount] of [["A-1", 25], ["B-22", 40], ["C-333", 60]] as const) await walk("refund", order, amount);
    for (const [order, amount] of [["D-4", 30], ["E-55", 45], ["F-666", 55]] as const) await walk("cancel", order, amount);
    await walk("refund", "G-7777", 35);
    // A second tenant, for the admin's view.
    const line = JSON.stringify({ model: "gpt-4o-mini", tools: null, messages: [{ role: "user", content: "other tenant" }, { role: "assistant", content: "hello" }] });
    const imported = await fetch(`${dev.url}/api/import`, { method: "POST", headers: { authorization: "Bearer sk-other-tenant", "muscle-mem-namespace": "other-ns" }, body: line });
    if (imported.status !== 200) throw new Error(`import answered ${imported.status}`);
    const trees = await api<{ data: Array<{ id: string }> }>("/trees");
    if (trees.data.length !== 1) throw new Error("the test tenant should have one tree");
    treeId = trees.data[0].id;
    await until(() => api<{ data: Template[] }>(`/trees/${treeId}/templates`), (p) => p.data.filter((t) => t.confirmed).length >= 6);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await upstream?.close();
  });

  it("Should say in the prune dialog what goes, and keep the templates learned elsewhere (1400 px)", async () => {
    const before = (await api<{ data: Template[] }>(`/trees/${treeId}/templates`)).data;
    const cancel = before.filter((t) => t.slots.some((s) => s.values.includes("D-4")));
    expect(cancel.length).toBeGreaterThan(0);
    const { page, errors, close } = await newPage(WIDTHS[2]);
    await login(page);
    await openTree(page, false);
    await page.waitForSelector("#templates-pane li.template");
    await page.locator("g.node", { hasText: "cancel order #D-4" }).first().click();
    await page.waitForSelector("#node-panel:not([hidden]) #prune-node");
    await page.click("#prune-node");
    await page.waitForSelector("#confirm-dialog[open]");
    expect(await page.locator("#confirm-body [data-count=nodes]").textContent()).toMatch(/^\d+ nodes$/);
    expect(await page.locator("#confirm-body [data-count=answers]").textContent()).toMatch(/^3 recorded answers/);
    expect(await page.locator("#confirm-body [data-count=templates]").textContent()).toContain(`${cancel.length} learned templates learned from this branch`);
    await page.screenshot({ path: resolve(OUT, "usable-prune-dialog.png") });
    await page.click("#confirm-ok");
    await page.waitForSelector("#toast:not([hidden])");
    expect(await page.locator("#toast").textContent()).toContain(`${cancel.length} templates`);
    // The other templates stay, in the API and in the panel.
    const after = (await api<{ data: Template[] }>(`/trees/${treeId}/templates`)).data;
    expect(after.map((t) => t.id).sort()).toEqual(before.filter((t) => !cancel.includes(t)).map((t) => t.id).sort());
    await expect.poll(() => page.locator("#templates-pane li.template").count()).toBe(after.length);
    // The tree card shows the new node count.
    const tree = (await api<{ data: Array<{ node_count: number }> }>("/trees")).data[0];
    await expect.poll(() => page.locator(".tree-card .tree-stats").first().textContent()).toContain(`${tree.node_count} nodes`);
    expect(errors).toEqual([]);
    await close();
  });

  it("Should say which identity the dashboard uses: a tenant key, a key with no trees, the admin (all widths)", async () => {
    for (const size of WIDTHS) {
      const { page, close } = await newPage(size);
      await login(page);
      await page.waitForSelector(".tree-card");
      expect(await page.locator("#whoami").textContent()).toMatch(/^tenant [0-9a-f]{8}… · 1 tree$/);
      expect(await page.locator("#no-trees").isVisible()).toBe(false);
      await page.click("#logout");
      await login(page, "dev-admin-tokn");
      await page.waitForSelector("#no-trees:not([hidden])");
      expect(await page.locator("#no-trees").textContent()).toContain("This key has no trees: if you meant the admin token, check it.");
      expect(await page.locator("#whoami").textContent()).toMatch(/· 0 trees$/);
      expect(await page.locator("#tree-list").textContent()).not.toContain("No trees yet");
      await page.screenshot({ path: resolve(OUT, `usable-typo-${size.name}.png`) });
      await close();
    }
  });

  it("Should show the admin each tree's tenant and filter by tenant and namespace", async () => {
    const { page, close } = await newPage(WIDTHS[2]);
    await login(page, ADMIN);
    await page.waitForSelector(".tree-card");
    expect(await page.locator("#whoami").textContent()).toBe("admin · every tenant · 2 trees of 2 tenants");
    expect(await page.locator(".tree-card").count()).toBe(2);
    expect(await page.locator(".tree-card .chip.tenant").count()).toBe(2);
    const tenants = await page.locator(".tree-card .chip.tenant").allTextContents();
    expect(new Set(tenants).size).toBe(2);
    const options = await page.locator("#filter-tenant option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter(Boolean));
    expect(options).toHaveLength(2);
    await page.selectOption("#filter-tenant", options[0]);
    await expect.poll(() => page.locator(".tree-card").count(), { timeout: 10_000 }).toBe(1);
    await page.selectOption("#filter-tenant", "");
    await expect.poll(() => page.locator(".tree-card").count(), { timeout: 10_000 }).toBe(2);
    await page.fill("#filter-namespace", "other-ns");
    await expect.poll(() => page.locator(".tree-card").count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator(".tree-card .ns").textContent()).toBe("other-ns");
    await page.fill("#filter-namespace", "");
    await expect.poll(() => page.locator(".tree-card").count(), { timeout: 10_000 }).toBe(2);
    await page.locator(".tree-card").first().click();
    await page.click("#stale-open");
    expect(await page.locator("#stale-all-label").textContent()).toContain("every tenant's trees");
    // A negative day count gets a sentence, not a schema message.
    await page.fill("#stale-days", "-3");
    await page.click("#stale-preview-btn");
    expect(await page.locator("#stale-preview .error").textContent()).toBe("The age must be a number of days, 0 or more.");
    await page.fill("#stale-days", "30");
    await page.screenshot({ path: resolve(OUT, "usable-admin.png") });
    await close();
  });

  it("Should open the node panel in view on every width (a sheet on phone and 1024 px, a column on 1400 px)", async () => {
    for (const size of WIDTHS) {
      const { page, close } = await newPage(size);
      await login(page);
      await openTree(page, size.mobile);
      await tapOrClick(page, "g.node:has-text('refund order #B-22')", size.mobile);
      await page.waitForSelector("#node-panel:not([hidden]) .facts");
      const box = await page.locator("#node-panel").evaluate((el) => {
        const r = el.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, width: r.width, inner: window.innerHeight };
      });
      expect(box.width).toBeGreaterThan(200);
      expect(box.top).toBeGreaterThanOrEqual(0);
      expect(box.top).toBeLessThan(box.inner - 150);
      expect(await page.locator("#prune-node").isVisible()).toBe(true);
      await page.screenshot({ path: resolve(OUT, `usable-panel-${size.name}.png`) });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      // The back arrow exists only where the list and the branch are two screens.
      expect(await page.locator("#back").isVisible()).toBe(size.width <= 720);
      await close();
    }
  });

  it("Should expand all, expand to a depth, and search by text, tool name and argument with the root kept in the path (all widths)", async () => {
    const tree = (await api<{ data: Array<{ node_count: number }> }>("/trees")).data[0];
    const byTool = await api<{ data: Array<{ hash: string }> }>(`/trees/${treeId}/search?q=get_order`);
    const users = (await api<{ data: unknown[] }>(`/trees/${treeId}/children`)).data.length;
    const wait = { timeout: 20_000 };
    for (const size of WIDTHS) {
      const { page, close } = await newPage(size);
      await login(page);
      await openTree(page, size.mobile);
      expect(await page.locator("g.node.role-user").count()).toBe(users);
      expect(await page.locator("g.node.role-assistant").count()).toBe(0);
      await tapOrClick(page, "#expand-all", size.mobile);
      await expect.poll(() => page.locator("#branch-status").textContent(), wait).toBe(`Opened all ${tree.node_count} nodes.`);
      expect(await page.locator("g.node:not(.root):not(.more)").count()).toBe(tree.node_count);
      await tapOrClick(page, "#collapse-all", size.mobile);
      expect(await page.locator("g.node:not(.root)").count()).toBe(users);
      await page.selectOption("#expand-depth", "2");
      await expect.poll(() => page.locator("#branch-status").textContent(), wait).toContain("Opened to depth 2");
      expect(await page.locator("g.node.role-assistant").count()).toBe(users);
      expect(await page.locator("g.node.role-tool").count()).toBe(0);
      await tapOrClick(page, "#collapse-all", size.mobile);
      // Tool name.
      await page.fill("#branch-search", "get_order");
      await page.press("#branch-search", "Enter");
      await expect.poll(() => page.locator("g.node.match").count(), wait).toBe(byTool.data.length);
      expect(await page.locator("#branch-path button").first().textContent()).toBe("root");
      await page.waitForSelector("#node-panel:not([hidden]) .call");
      // A tool argument name.
      await page.fill("#branch-search", "order_id");
      await page.press("#branch-search", "Enter");
      await expect.poll(() => page.locator("#branch-status").textContent(), wait).toContain("for “order_id”");
      expect(await page.locator("g.node.match").count()).toBeGreaterThan(0);
      expect((await page.locator("#branch-path button").count())).toBeGreaterThan(2);
      await page.fill("#branch-search", "REFUND order #c-333");
      await page.press("#branch-search", "Enter");
      await expect.poll(() => page.locator("g.node.match").count(), wait).toBe(1);
      await page.fill("#branch-search", "no such thing anywhere");
      await page.press("#branch-search", "Enter");
      await expect.poll(() => page.locator("#branch-status").textContent(), wait).toContain("Nothing in this tree contains");
      // Filters dim, never hide.
      await page.selectOption("#branch-filter", "hit");
      expect(await page.locator("g.node.dim").count()).toBeGreaterThan(0);
      await page.screenshot({ path: resolve(OUT, `usable-search-${size.name}.png`), fullPage: size.mobile });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      await close();
    }
  });

  it("Should list recent requests with outcome, latency and tokens, open the node that served a hit, refresh live, and log no console errors (all widths)", async () => {
    await walk("refund", "A-1", 25);
    await until(() => api<{ data: Array<{ outcome: string; node: string | null }> }>("/requests?limit=100"), (p) => p.data.some((r) => r.outcome === "hit" && r.node));
    for (const size of WIDTHS) {
      const { page, errors, close } = await newPage(size);
      await login(page);
      await page.waitForSelector("#requests-pane .request");
      const outcomes = await page.locator("#requests-pane .request").evaluateAll((rs) => rs.map((r) => r.getAttribute("data-outcome")));
      expect(outcomes).toContain("hit");
      expect(outcomes).toContain("miss");
      expect(await page.locator("#requests-pane svg.requests-chart rect.bar.o-hit").count()).toBeGreaterThan(0);
      expect(await page.locator("#requests-pane .request.o-hit").first().textContent()).toMatch(/\d+ ms · [\d.]+K? tok saved · /);
      await page.screenshot({ path: resolve(OUT, `usable-requests-${size.name}.png`), fullPage: true });
      await tapOrClick(page, "#requests-pane button.request.o-hit", size.mobile);
      await page.waitForSelector("#node-panel:not([hidden]) .facts");
      expect(await page.locator("#node-panel .role-chip").textContent()).toBe("assistant");
      expect(await page.locator("#node-panel .facts").textContent()).not.toContain("path node");
      await page.waitForTimeout(300);
      await page.screenshot({ path: resolve(OUT, `usable-request-node-${size.name}.png`) });
      const top = await page.locator("#node-panel").evaluate((el) => el.getBoundingClientRect().top);
      expect(top).toBeLessThan(size.height - 150);
      // The admin's first load: no series call that fails (Analytics Engine is not configured locally).
      await page.click("#logout");
      await login(page, ADMIN);
      await page.waitForSelector("#traffic-pane.unconfigured .traffic-empty");
      expect(await page.locator("#traffic-pane").evaluate((el) => el.previousElementSibling?.id)).toBe("requests-pane");
      expect(errors).toEqual([]);
      await close();
    }
    // Live: a new request shows up without a click.
    const { page, errors, close } = await newPage(WIDTHS[2]);
    await login(page);
    await page.waitForSelector("#requests-pane .request");
    const before = await page.locator("#requests-pane .requests-list").textContent();
    expect(await page.locator("#live").isChecked()).toBe(true);
    await walk("refund", "B-22", 40);
    await expect.poll(() => page.locator("#requests-pane .requests-list").textContent(), { timeout: 20_000, interval: 500 }).not.toBe(before);
    expect(errors).toEqual([]);
    await close();
  });

  it("Should send Content-Security-Policy and X-Frame-Options with every dashboard asset (wrangler dev), and run clean under them", async () => {
    for (const path of ["/", "/index.html", "/js/main.js", "/app.css", "/vendor/d3-hierarchy.mjs", "/favicon.svg"]) {
      const res = await fetch(`${dev.url}${path}`);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      await res.arrayBuffer();
    }
    expect((await fetch(`${dev.url}/_headers`)).status).not.toBe(200);
    // A page that frames the dashboard gets nothing.
    const { page, errors, close } = await newPage(WIDTHS[2]);
    await login(page);
    await page.waitForSelector(".tree-card");
    expect(errors).toEqual([]);
    await page.setContent(`<iframe id="f" src="${dev.url}/"></iframe>`);
    await page.waitForTimeout(1000);
    const framed = page.frames().find((f) => f.url().startsWith(dev.url));
    const loaded = framed ? await framed.evaluate(() => document.getElementById("login-view") !== null).catch(() => false) : false;
    expect(loaded).toBe(false);
    await close();
  });
});
