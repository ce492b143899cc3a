import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyticsRoutes, ERROR_TEXT, SCRIPTED_ROWS, type SeenQuery } from "../../tools/analytics-upstream";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { browserSkip, launchChromium, requireChromium } from "./chromium";

/**
 * The dashboard's Traffic panel in headless Chromium against two `wrangler dev`
 * Workers: one configured for Analytics Engine with ANALYTICS_SQL_URL pointing
 * at a local stand-in of the SQL API (tools/analytics-upstream.ts, its mode
 * switched by the test), one without the analytics vars. Screenshots go to
 * test-output/dashboard/.
 */
const OUT = resolve(import.meta.dirname, "../../test-output/dashboard");
const ADMIN = "traffic-admin-token";
const ACCOUNT = "0123456789abcdef0123456789abcdef";
const skip = browserSkip("the traffic panel browser tests");

let configured: WranglerDev;
let bare: WranglerDev;
let standIn: Server;
let standInUrl: string;
let browser: Browser;
/** The stand-in's current mode (tools/analytics-upstream.ts): every query goes to `/__analytics/<mode>/browser/`. */
let mode = "ok";

/** A local SQL API stand-in whose behaviour the test switches between calls. */
async function startStandIn(): Promise<void> {
  const routes = analyticsRoutes();
  standIn = createServer((req, res) => {
    if (req.method === "POST") req.url = `/__analytics/${mode}/browser${req.url ?? "/"}`;
    if (!routes.handle(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((done) => standIn.listen(0, "127.0.0.1", done));
  standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
}

async function seen(): Promise<SeenQuery[]> {
  return (await (await fetch(`${standInUrl}/__analytics/seen/browser`)).json()) as SeenQuery[];
}

async function open(page: Page, dev: WranglerDev, token: string): Promise<void> {
  const trouble: string[] = [];
  page.on("pageerror", (error) => trouble.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => trouble.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ""}`));
  page.on("response", (response) => void (response.status() >= 400 && trouble.push(`${response.status()} ${response.url()}`)));
  await page.goto(`${dev.url}/`);
  try {
    await page.waitForSelector("#token", { timeout: 15_000 });
  } catch {
    // Once, in CI with both test lanes loading the 2 cores, the second Worker's first page never showed its
    // login form (main.js never ran; not seen since, nor in 11 s alone). Say what the page saw, and load it again.
    console.warn(
      `[browser] no login form on ${dev.url} after 15 s (${trouble.join("; ") || "no failed request, error response or page error"}); reloading once`,
    );
    await page.reload();
  }
  await page.fill("#token", token);
  await page.click("#login-form button[type=submit]");
  // The identity badge comes with the first load (a key without trees lists none, it gets a warning).
  await page.waitForSelector("#whoami:not([hidden])");
}

describe.skipIf(skip)("dashboard Traffic panel in headless Chromium", () => {
  beforeAll(async () => {
    requireChromium();
    mkdirSync(OUT, { recursive: true });
    await startStandIn();
    configured = await startWranglerDev({
      // KEY_FRESH_MS=0: the tenant key here is no provider's key (nothing to check it against), and the test is about the panel.
      vars: {
        ADMIN_TOKEN: ADMIN,
        KEY_FRESH_MS: "0",
        ANALYTICS_ACCOUNT_ID: ACCOUNT,
        ANALYTICS_API_TOKEN: "browser-analytics-token",
        ANALYTICS_SQL_URL: `${standInUrl}/accounts/{id}/analytics_engine/sql`,
      },
    });
    bare = await startWranglerDev({ vars: { ADMIN_TOKEN: ADMIN } });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await configured?.stop();
    await bare?.stop();
    await new Promise((done) => (standIn ? standIn.close(done) : done(undefined)));
  });

  it("Should draw one bar group per step, the outcome bars and the p50 line from the SQL API's rows (laptop)", async () => {
    mode = "ok";
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await open(page, configured, ADMIN);
    await page.waitForSelector("#traffic-pane svg.bars");
    const [query] = await seen();
    expect(query.authorization).toBe("Bearer browser-analytics-token");
    expect(query.path).toBe(`/__analytics/ok/browser/accounts/${ACCOUNT}/analytics_engine/sql`);
    expect(query.sql).toContain("INTERVAL '1' MINUTE");
    expect(await page.locator("#traffic-pane g.step").count()).toBe(60);
    const hits = SCRIPTED_ROWS.map((r) => Number(r.hits));
    expect(
      (await page.locator("#traffic-pane rect.bar.hits").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("data-value"))))).sort((a, b) => a - b),
    ).toEqual([...hits].sort((a, b) => a - b));
    expect(await page.locator("#traffic-pane rect.bar.misses").count()).toBe(1);
    expect(await page.locator("#traffic-pane rect.bar.bypasses").count()).toBe(1);
    // Steps 0 and 2 have latency, step 1 none: two separate runs of the p50 line.
    expect(await page.locator("#traffic-pane polyline.p50").count()).toBe(2);
    expect(await page.locator("#traffic-pane rect.p50-step").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("data-value"))))).toEqual(
      SCRIPTED_ROWS.map((r) => r.p50_ms),
    );
    const firstTitle = await page.locator("#traffic-pane g.step").first().locator("title").textContent();
    expect(firstTitle).toContain("3 hits · 1 misses · 0 bypasses · p50 12.5 ms · p99 40 ms");
    expect(await page.locator(".traffic-summary").textContent()).toBe("16 requests · 93% hit rate · per 1 min");
    expect(await page.locator(".traffic-legend").textContent()).toContain("13 hits");
    await page.screenshot({ path: resolve(OUT, "laptop-traffic.png") });

    await page.click(".traffic-ranges button:has-text('24 h')");
    await page.waitForFunction(() => document.querySelectorAll("#traffic-pane g.step").length === 96);
    expect((await seen()).at(-1)?.sql).toContain("INTERVAL '15' MINUTE");
    expect(await page.locator(".traffic-summary").textContent()).toContain("per 15 min");
    expect(await page.locator(".traffic-ranges button.active").textContent()).toBe("24 h");
    await page.close();
  });

  it("Should fit a phone without horizontal overflow", async () => {
    mode = "ok";
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await open(page, configured, ADMIN);
    await page.waitForSelector("#traffic-pane svg.latency");
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    const box = await page.locator("#traffic-pane").boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    await page.screenshot({ path: resolve(OUT, "phone-traffic.png") });
    await context.close();
  });

  it("Should show the SQL API's failure as text, markup and all, not as markup, and an empty window as such", async () => {
    mode = "error-500";
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await open(page, configured, ADMIN);
    await page.waitForSelector("#traffic-pane .traffic-error");
    const text = await page.locator("#traffic-pane .traffic-error").textContent();
    expect(text).toContain("answered 500");
    expect(text).toContain(ERROR_TEXT);
    expect(await page.locator("#traffic-pane b").count()).toBe(0);
    expect(await page.locator("#traffic-pane svg").count()).toBe(0);
    // The trees' Refresh reloads the panel too: a window without cache traffic says so.
    mode = "empty";
    await page.click("#refresh");
    await page.waitForSelector("#traffic-pane .traffic-none");
    expect(await page.locator(".traffic-summary").textContent()).toBe("0 requests · – hit rate · per 1 min");
    expect(await page.locator("#traffic-pane svg").count()).toBe(0);
    await page.close();
    mode = "ok";
  });

  it("Should stay hidden for a tenant key (the series are admin only)", async () => {
    mode = "ok";
    const before = (await seen()).length;
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const asked: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/series")) asked.push(r.url());
    });
    await open(page, configured, "sk-traffic-tenant");
    await page.waitForSelector("#whoami:not([hidden])");
    await page.waitForFunction(() => document.getElementById("traffic-pane")?.hidden === true);
    // The dashboard knows the identity first (GET /api/whoami): a tenant key never asks for the series.
    expect(asked).toEqual([]);
    expect(await page.locator("#traffic-pane svg").count()).toBe(0);
    expect((await seen()).length).toBe(before);
    await page.close();
  });

  it("Should explain how to switch the series on when the Worker has no analytics vars", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await open(page, bare, ADMIN);
    await page.waitForSelector("#traffic-pane .traffic-empty");
    expect(await page.locator("#traffic-pane").isVisible()).toBe(true);
    expect(await page.locator(".traffic-empty code").allTextContents()).toEqual(["ANALYTICS_ACCOUNT_ID", "ANALYTICS_API_TOKEN"]);
    const empty = await page.locator(".traffic-empty").textContent();
    expect(empty).toContain("Traffic series are not switched on.");
    expect(empty).toContain("docs/deploy.md");
    expect(await page.locator(".traffic-reason").textContent()).toContain("set the var ANALYTICS_ACCOUNT_ID and the secret ANALYTICS_API_TOKEN");
    expect(await page.locator("#traffic-pane svg").count()).toBe(0);
    expect(await page.locator(".traffic-ranges").count()).toBe(0);
    await page.screenshot({ path: resolve(OUT, "laptop-traffic-unconfigured.png") });
    await page.close();
  });
});
