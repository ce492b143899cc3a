import { type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestUpstream } from "../../tools/test-upstream";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { browserSkip, launchChromium, requireChromium } from "./chromium";

/**
 * The dashboard against recorded content an adversarial client chose: a model name, a prompt and a tool name
 * holding `<script>`, `<img onerror>`, a `javascript:` URL and a bidi override, recorded through `wrangler dev`
 * and the scripted model, then browsed in headless Chromium. It must show them as text (no element, no script
 * run) and show the override as a visible code point; its static assets carry the security headers.
 */
const KEY = "sk-sec-dashboard-test";
const skip = browserSkip("the dashboard security browser tests");
const RLO = "\u202E";
const MODEL = `echo<img src=x onerror="window.__pwned='model'">${RLO}gpj.exe`;
const PROMPT = `<script>window.__pwned='script'</script><img src=x onerror="window.__pwned='prompt'"> javascript:window.__pwned='url' invoice${RLO}fdp.exe`;
const TOOL = `lookup<img src=x onerror="window.__pwned='tool'">`;

let dev: WranglerDev;
let upstream: Awaited<ReturnType<typeof startTestUpstream>>;
let browser: Browser;

describe.skipIf(skip)("dashboard security in headless Chromium", () => {
  beforeAll(async () => {
    requireChromium();
    upstream = await startTestUpstream(0);
    dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: upstream.url, HOT_CACHE_TTL_MS: "1000", COUNTER_FLUSH_MS: "500", TALLY_FLUSH_MS: "500" } });
    const res = await fetch(`${dev.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        tools: [{ type: "function", function: { name: TOOL, description: "<b>x</b>", parameters: { type: "object", properties: {} } } }],
        messages: [{ role: "user", content: PROMPT }],
      }),
    });
    await res.text();
    if (res.status !== 200) throw new Error(`chat answered ${res.status}`);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await upstream?.close();
  });

  it("Should show recorded model names, prompts and tool names as text, never as markup, and show bidi overrides", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${dev.url}/`);
    await page.fill("#token", KEY);
    await page.click("#login-form button[type=submit]");
    await page.locator(".tree-card").first().click();
    const user = page.locator("g.node.user, g.node", { hasText: "script" }).first();
    await user.waitFor();
    await user.click();
    await page.locator("#node-panel:not([hidden])").waitFor();
    await page.waitForFunction(() => document.querySelector("#node-panel")?.textContent?.includes("javascript:"));
    // Nothing the client chose became an element or ran.
    expect(await page.locator("body img").count()).toBe(0);
    expect(await page.locator("script:not([src])").count()).toBe(0);
    expect(await page.locator("a[href^='javascript']").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    // The markup is shown as the text it is, and the override as a visible code point, never obeyed.
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain("<img src=x onerror=");
    expect(text).toContain("⟨U+202E⟩");
    expect(text).not.toContain(RLO);
    expect(await page.locator("#branch-title").textContent()).toContain("⟨U+202E⟩gpj.exe");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Should serve the dashboard and its scripts with a deny-all-but-self CSP, nosniff, no framing, an isolated window, and no .d.ts", async () => {
    for (const path of ["/", "/js/main.js", "/app.css"]) {
      const res = await fetch(`${dev.url}${path}`);
      await res.arrayBuffer();
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("cross-origin-opener-policy")).toBe("same-origin");
      expect(res.headers.get("cross-origin-resource-policy")).toBe("same-origin");
    }
    expect((await fetch(`${dev.url}/js/main.js`)).headers.get("content-type")).toMatch(/javascript/);
    const typings = await fetch(`${dev.url}/js/format.d.ts`);
    await typings.arrayBuffer();
    expect(typings.headers.get("content-type") ?? "").not.toMatch(/typescript|video/);
  });
});
