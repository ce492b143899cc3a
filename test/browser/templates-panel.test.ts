import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { startTestUpstream } from "../../tools/test-upstream";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { browserSkip, launchChromium, requireChromium } from "./chromium";

/**
 * The dashboard's Templates panel in headless Chromium against `wrangler dev`
 * and the scripted refund desk: three orders teach the Worker learned templates,
 * a fourth is served by them, and the panel shows each template, its slots and
 * its hits; a tree with two orders shows a template still learning, a tree with
 * one order the empty state, a declared tree its variables. Screenshots go to
 * test-output/dashboard/.
 */
const OUT = resolve(import.meta.dirname, "../../test-output/dashboard");
const KEY = "sk-templates-panel-test";
const skip = browserSkip("the templates panel browser tests");

type Msg = { role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };
interface Slot {
  type: string;
  copied: boolean;
  values: string[];
  min: string | null;
  max: string | null;
}
interface Template {
  id: string;
  bindings: number;
  hits: number;
  confirmed: boolean;
  refuted: boolean;
  slots: Slot[];
}
interface TemplatePage {
  min_bindings: number;
  data: Template[];
}

let dev: WranglerDev;
let upstream: Awaited<ReturnType<typeof startTestUpstream>>;
let browser: Browser;
/** Tree ids by namespace. */
const trees = new Map<string, string>();

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${dev.url}/api${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** Walks the refund desk for one delivered order to the end; answers how each step was served. */
async function refund(
  namespace: string,
  order: string,
  amount: number,
  headers: Record<string, string> = {},
): Promise<Array<{ cache: string | null; template: string | null }>> {
  const messages: Msg[] = [{ role: "user", content: `Please refund order #${order}` }];
  const steps: Array<{ cache: string | null; template: string | null }> = [];
  for (let turn = 0; turn < 4; turn++) {
    const res = await fetch(`${dev.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "muscle-mem-namespace": namespace, ...headers },
      body: JSON.stringify({ model: "gpt-4o-mini", tools: REFUND_TOOLS, messages }),
    });
    const body = (await res.json()) as { choices: Array<{ message: Msg }> };
    if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${JSON.stringify(body)}`);
    steps.push({ cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template") });
    const m = body.choices[0].message;
    messages.push({ role: "assistant", content: m.content, ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}) });
    if (!m.tool_calls) break;
    const result = m.tool_calls[0].function.name === "refund" ? { order_id: order, refunded: true } : { order_id: order, status: "delivered", amount };
    messages.push({ role: "tool", tool_call_id: m.tool_calls[0].id, content: JSON.stringify(result) });
  }
  return steps;
}

/**
 * How long a counted hit may take to reach D1 here, from this file's vars: the isolate hands its counts on
 * COUNTER_FLUSH_MS after the first one, the tree's HitTally writes them TALLY_FLUSH_MS after the first it
 * gathered, and a failed write retries 10 s later (src/store/objects/hit-tally.ts). Twice that, for a loaded machine.
 */
const COUNTER_FLUSH_MS = 1000;
const TALLY_FLUSH_MS = 2000;
const HITS_WITHIN_MS = 2 * (COUNTER_FLUSH_MS + TALLY_FLUSH_MS + 10_000);

/** What D1 and wrangler say about a tree's counts, for a failure message. */
async function countsOf(treeId: string | undefined): Promise<string> {
  const tree = await dev.sql(`SELECT hits FROM trees WHERE id = '${treeId}'`);
  const recent = await dev.sql(`SELECT at, outcome, template_id FROM recent_requests WHERE tree_id = '${treeId}' AND outcome = 'template' ORDER BY id`);
  const logged = dev
    .output()
    .split("\n")
    .filter((l) => /tally|counter_flush|error/i.test(l))
    .slice(-20);
  return JSON.stringify({ now: Date.now(), tree, recent, logged });
}

/** Polls the templates API until `done` holds (learning and hit counting run after the response). */
async function templatesWhen(namespace: string, done: (page: TemplatePage) => boolean): Promise<TemplatePage> {
  let page: TemplatePage = { min_bindings: 0, data: [] };
  for (let i = 0; i < 200; i++) {
    page = await api<TemplatePage>(`/trees/${trees.get(namespace)}/templates`);
    if (done(page)) return page;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`templates of ${namespace} never got there: ${JSON.stringify(page)}`);
}

async function openTree(page: Page, namespace: string, tap = false): Promise<void> {
  await page.goto(`${dev.url}/`);
  await page.fill("#token", KEY);
  await page.click("#login-form button[type=submit]");
  const card = page.locator(".tree-card", { hasText: namespace });
  if (tap) await card.tap();
  else await card.click();
  await page.waitForSelector("#templates-pane:not([hidden]) .templates-body > :not(.muted)");
}

describe.skipIf(skip)("dashboard Templates panel in headless Chromium", () => {
  beforeAll(async () => {
    requireChromium();
    mkdirSync(OUT, { recursive: true });
    upstream = await startTestUpstream(0);
    dev = await startWranglerDev({
      vars: { UPSTREAM_BASE_URL: upstream.url, HOT_CACHE_TTL_MS: "1000", COUNTER_FLUSH_MS: String(COUNTER_FLUSH_MS), TALLY_FLUSH_MS: String(TALLY_FLUSH_MS) },
    });
    for (const [order, amount] of [
      ["A-1", 25],
      ["B-22", 40],
      ["C-333", 60],
    ] as const)
      await refund("learned", order, amount);
    for (const [order, amount] of [
      ["K-7", 10],
      ["L-88", 20],
    ] as const)
      await refund("learning", order, amount);
    await refund("solo", "S-1", 15);
    await refund("declared", "E-5", 35, { "muscle-mem-bindings": JSON.stringify({ order_id: "E-5" }) });
    const listed = await api<{ data: Array<{ id: string; namespace: string; node_count: number }> }>("/trees");
    for (const t of listed.data) if (t.node_count > 0) trees.set(t.namespace, t.id);
    expect([...trees.keys()].sort()).toEqual(["declared", "learned", "learning", "solo"]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await upstream?.close();
  });

  it("Should show each learned template with its slots, ranges, bindings and hits after a learned hit (laptop)", async () => {
    const learned = await templatesWhen("learned", (p) => p.data.length === 3 && p.data.every((t) => t.confirmed));
    const steps = await refund("learned", "D-4444", 30);
    expect(steps.map((s) => s.cache)).toEqual(["hit", "hit", "hit"]);
    expect(steps.every((s) => s.template && learned.data.some((t) => t.id === s.template))).toBe(true);
    expect(new Set(steps.map((s) => s.template)).size).toBe(3);
    // Each hit reaches D1 within COUNTER_FLUSH_MS + TALLY_FLUSH_MS (about 3 s here): poll for it, by the clock.
    const started = Date.now();
    let served = await api<TemplatePage>(`/trees/${trees.get("learned")}/templates`);
    while (!served.data.every((t) => t.hits === 1) && Date.now() - started < HITS_WITHIN_MS) {
      await new Promise((r) => setTimeout(r, 200));
      served = await api<TemplatePage>(`/trees/${trees.get("learned")}/templates`);
    }
    const waited = Date.now() - started;
    const counted = served.data.every((t) => t.hits === 1) ? "" : await countsOf(trees.get("learned"));
    expect(
      served.data.map((t) => [t.id, t.hits]),
      `after ${waited} ms; steps ${JSON.stringify(steps)}; ${counted}`,
    ).toEqual(served.data.map((t) => [t.id, 1]));

    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await openTree(page, "learned");
    const items = page.locator("#templates-pane li.template");
    expect(await items.count()).toBe(3);
    expect(await page.locator("#templates-pane h2 .count").textContent()).toBe("3");
    expect(await page.locator(".templates-summary").textContent()).toContain("3 learned templates · 3 serving · 0 learning · 0 refuted");
    for (const t of served.data) {
      const item = page.locator(`li.template[data-template="${t.id}"]`);
      expect(await item.locator(".badge").textContent()).toBe("serves");
      expect(await item.locator("dd.hits").textContent()).toBe("1");
      expect(await item.locator("dd.bindings").textContent()).toBe("3 distinct (serves from 3)");
      expect(await item.locator("li.slot").count()).toBe(t.slots.length);
      const first = item.locator("li.slot").first();
      expect(await first.locator(".chip.type").textContent()).toBe("identifier");
      expect((await first.locator("code.value").allTextContents()).sort()).toEqual(["A-1", "B-22", "C-333"]);
    }
    // The refund step copies the amount: a number slot with the range seen so far.
    const refundStep = served.data.find((t) => t.slots.some((s) => s.type === "number" && s.copied));
    expect(refundStep).toBeDefined();
    const numberSlot = page.locator(`li.template[data-template="${refundStep?.id}"] li.slot`, { hasText: "number" });
    expect(await numberSlot.locator(".range").textContent()).toBe("range 25 – 60");
    expect(await numberSlot.textContent()).toContain("copied into the answer");
    expect((await numberSlot.locator("code.value").allTextContents()).sort()).toEqual(["25", "40", "60"]);
    // On a laptop the panel scrolls inside the branch pane; the page itself does not grow.
    expect(await page.evaluate(() => document.documentElement.scrollHeight - window.innerHeight)).toBeLessThanOrEqual(0);
    await page.locator("g.node", { hasText: "order #A-1" }).first().click();
    await page.waitForSelector("g.node.role-assistant");
    await page.screenshot({ path: resolve(OUT, "laptop-templates.png") });
    await page.close();
  });

  it("Should show a template that is still learning, with the bindings it lacks", async () => {
    const learning = await templatesWhen("learning", (p) => p.data.length > 0);
    expect(learning.data.every((t) => !t.confirmed && t.bindings === 2)).toBe(true);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await openTree(page, "learning");
    expect(await page.locator("li.template").count()).toBe(learning.data.length);
    expect(await page.locator("li.template .badge").allTextContents()).toEqual(learning.data.map(() => "learning"));
    expect(await page.locator("li.template .note").first().textContent()).toBe("Confirmed by 2 of 3 distinct bindings; serves from 3.");
    expect(await page.locator(".templates-summary").textContent()).toContain("0 serving");
    await page.screenshot({ path: resolve(OUT, "laptop-templates-learning.png") });
    await page.close();
  });

  it("Should explain the empty state on a tree without templates, pointing at muscle-mem-bindings", async () => {
    expect((await api<TemplatePage>(`/trees/${trees.get("solo")}/templates`)).data).toEqual([]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await openTree(page, "solo");
    const empty = page.locator("#templates-pane .templates-empty");
    const text = (await empty.textContent()) ?? "";
    expect(text).toContain("No learned templates yet");
    expect(text).toContain("3 distinct bindings");
    expect(text).toContain("muscle-mem-bindings");
    expect(await page.locator("#templates-pane h2 .count").textContent()).toBe("0");
    expect(await page.locator("#templates-pane .declared").count()).toBe(0);
    await page.screenshot({ path: resolve(OUT, "laptop-templates-empty.png") });
    await page.close();
  });

  it("Should list a declared tree's variables from its frame", async () => {
    const tree = await api<{ frame: Record<string, unknown> }>(`/trees/${trees.get("declared")}`);
    expect(tree.frame["muscle-mem-variables"]).toEqual(["order_id"]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await openTree(page, "declared");
    expect(await page.locator("#templates-pane .declared .chip.variable").allTextContents()).toEqual(["{{order_id}}"]);
    expect(await page.locator("#templates-pane .templates-empty").textContent()).toContain("declared variables above");
    await page.close();
  });

  it("Should render API text as text, never as markup", async () => {
    const real = await api<TemplatePage>(`/trees/${trees.get("learned")}/templates`);
    const evil = `<img src=x onerror="window.__pwned=1">`;
    const crafted = {
      ...real,
      data: real.data.map((t) => ({ ...t, finish_reason: evil, slots: t.slots.map((s) => ({ ...s, values: [evil, ...s.values] })) })),
    };
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.route("**/api/trees/*/templates", (route) => route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(crafted) }));
    await openTree(page, "learned");
    expect(await page.locator("#templates-pane img").count()).toBe(0);
    expect(await page.locator("#templates-pane code.value", { hasText: evil }).count()).toBeGreaterThan(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.close();
  });

  it("Should fit a phone: the panel under the branch view, no horizontal overflow", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await openTree(page, "learned", true);
    expect(await page.locator("#trees-pane").isVisible()).toBe(false);
    await page.locator("#templates-pane").scrollIntoViewIfNeeded();
    expect(await page.locator("#templates-pane li.template").first().isVisible()).toBe(true);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const wide = await page.evaluate(
      () => [...document.querySelectorAll("#templates-pane *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5).length,
    );
    expect(wide).toBe(0);
    await page.screenshot({ path: resolve(OUT, "phone-templates.png"), fullPage: true });
    await context.close();
  });
});
