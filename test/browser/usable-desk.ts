import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { startTestUpstream } from "../../tools/test-upstream";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { browserSkip, launchChromium, requireChromium } from "./chromium";

/**
 * What the dashboard-usable-*.test.ts files share: `wrangler dev` behind the scripted refund desk,
 * headless Chromium at 390, 1024 and 1400 px, and the helpers that drive them. Each file seeds its
 * own traffic (`useUsableDesk`). Screenshots go to test-output/dashboard/.
 */
export const OUT = resolve(import.meta.dirname, "../../test-output/dashboard");
const KEY = "sk-usable-test";
export const ADMIN = "dev-admin-token";
export const skip = browserSkip("the dashboard browser tests");

type Msg = { role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };
export interface Template {
  id: string;
  confirmed: boolean;
  slots: Array<{ values: string[] }>;
}
export const WIDTHS = [
  { name: "phone", width: 390, height: 844, mobile: true },
  { name: "laptop", width: 1024, height: 768, mobile: false },
  { name: "desktop", width: 1400, height: 900, mobile: false },
] as const;

// Set by useUsableDesk's beforeAll; ES module exports are live bindings, so the test files read them as they are then.
export let dev: WranglerDev;
let upstream: Awaited<ReturnType<typeof startTestUpstream>>;
let browser: Browser;
/** The test tenant's one tree. */
export let treeId = "";

export async function api<T>(path: string, token = KEY): Promise<T> {
  const res = await fetch(`${dev.url}/api${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * Walks the refund desk for one order to the end (`verb` picks the branch: "refund" or "cancel"; lower case, so that it
 * stays structural); `headers` go with every request (e.g. a muscle-mem-namespace).
 */
export async function walk(verb: string, order: string, amount: number, headers: Record<string, string> = {}): Promise<void> {
  const messages: Msg[] = [{ role: "user", content: `please ${verb} order #${order}` }];
  for (let turn = 0; turn < 4; turn++) {
    const res = await fetch(`${dev.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
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
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 200 && !done(v); i++) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  if (!done(v)) throw new Error(`never got there: ${JSON.stringify(v)}`);
  return v;
}

/** Imports one tree for a second tenant (namespace other-ns), for the admin's view. */
export async function importOtherTenant(): Promise<void> {
  const line = JSON.stringify({
    model: "gpt-4o-mini",
    tools: null,
    messages: [
      { role: "user", content: "other tenant" },
      { role: "assistant", content: "hello" },
    ],
  });
  const imported = await fetch(`${dev.url}/api/import`, {
    method: "POST",
    headers: { authorization: "Bearer sk-other-tenant", "muscle-mem-namespace": "other-ns" },
    body: line,
  });
  if (imported.status !== 200) throw new Error(`import answered ${imported.status}`);
}

/**
 * Starts the refund desk, `wrangler dev` and Chromium before the file's tests (after `seed` has sent the
 * file's traffic as the test tenant, whose one tree becomes `treeId`) and stops them after. Call it inside
 * the file's describe.
 */
export function useUsableDesk(seed: () => Promise<void>): void {
  beforeAll(async () => {
    requireChromium();
    mkdirSync(OUT, { recursive: true });
    upstream = await startTestUpstream(0);
    // Another tenant is seeded through its own key: the operator grants it (IMPORT_TENANTS).
    dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: upstream.url, HOT_CACHE_TTL_MS: "1000", COUNTER_FLUSH_MS: "200", IMPORT_TENANTS: "*" } });
    await seed();
    const trees = await api<{ data: Array<{ id: string }> }>("/trees");
    if (trees.data.length !== 1) throw new Error("the test tenant should have one tree");
    treeId = trees.data[0].id;
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await upstream?.close();
  });
}

/** A page that records console errors and failed requests. */
export async function newPage(size: (typeof WIDTHS)[number]): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({
    viewport: { width: size.width, height: size.height },
    isMobile: size.mobile,
    hasTouch: size.mobile,
    deviceScaleFactor: size.mobile ? 2 : 1,
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, errors, close: () => context.close() };
}

export async function login(page: Page, token = KEY): Promise<void> {
  await page.goto(`${dev.url}/`);
  await page.fill("#token", token);
  await page.click("#login-form button[type=submit]");
}

export async function openTree(page: Page, mobile: boolean): Promise<void> {
  await page.waitForSelector(".tree-card");
  if (mobile) await page.locator(".tree-card").first().tap();
  else await page.locator(".tree-card").first().click();
  await page.waitForSelector("g.node.role-user");
}

export async function tapOrClick(page: Page, selector: string, mobile: boolean): Promise<void> {
  if (mobile) await page.locator(selector).first().tap();
  else await page.locator(selector).first().click();
}
