import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ADMIN, api, dev, importOtherTenant, login, newPage, OUT, skip, tapOrClick, until, useUsableDesk, walk, WIDTHS } from "./usable-desk";

/**
 * Around the tree, in headless Chromium against `wrangler dev` and the scripted refund desk, at 390,
 * 1024 and 1400 px: who you are (a tenant key, a mistyped admin token, the admin with tenant chips and
 * filters), the recent requests and their live refresh, the security headers, and no console errors.
 */
describe.skipIf(skip)("the dashboard's identity, recent requests and headers on every width", () => {
  useUsableDesk(async () => {
    await walk("refund", "A-1", 25);
    // A second tenant, for the admin's view.
    await importOtherTenant();
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

  it("Should list recent requests with outcome, latency and tokens, open the node that served a hit, refresh live, and log no console errors (all widths)", async () => {
    await walk("refund", "A-1", 25);
    // The walk's hits land within one tally write: gathered into one row that stands for them all (count ≥ 2).
    const listed = await until(
      () => api<{ data: Array<{ outcome: string; node: string | null; count: number }> }>("/requests?limit=100"),
      (p) => p.data.some((r) => r.outcome === "hit" && r.node && r.count >= 2),
    );
    const gathered = listed.data.find((r) => r.outcome === "hit" && r.count >= 2);
    for (const size of WIDTHS) {
      const { page, errors, close } = await newPage(size);
      await login(page);
      await page.waitForSelector("#requests-pane .request");
      const outcomes = await page.locator("#requests-pane .request").evaluateAll((rs) => rs.map((r) => r.getAttribute("data-outcome")));
      expect(outcomes).toContain("hit");
      expect(outcomes).toContain("miss");
      expect(await page.locator("#requests-pane svg.requests-chart rect.bar.o-hit").count()).toBeGreaterThan(0);
      expect(await page.locator("#requests-pane .request.o-hit").first().textContent()).toMatch(/\d+ ms · [\d.]+K? tok saved · /);
      expect(await page.locator("#requests-pane .request.o-hit .outcome").allTextContents()).toContain(`hit ×${gathered?.count}`);
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
    // Live: a new request shows up without a click. It goes to a namespace of its own, so that its own rows (which
    // name the namespace) tell it apart: the list's text alone changes by itself ("3 s ago").
    const live = `live-${Date.now().toString(36)}`;
    const { page, errors, close } = await newPage(WIDTHS[2]);
    await login(page);
    await page.waitForSelector("#requests-pane .request");
    const rows = page.locator("#requests-pane .requests-list .request", { hasText: `gpt-4o-mini · ${live}` });
    expect(await rows.count()).toBe(0);
    expect(await page.locator("#live").isChecked()).toBe(true);
    await walk("refund", "B-22", 40, { "muscle-mem-namespace": live });
    await expect.poll(() => rows.count(), { timeout: 20_000, interval: 500 }).toBeGreaterThan(0);
    expect(await rows.first().getAttribute("data-outcome")).toBe("miss");
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
