import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { geminiRefundDesk, startScriptedGeminiModel } from "../../tools/scripted-gemini-model";
import { startTestUpstream } from "../../tools/test-upstream";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { browserSkip, launchChromium, requireChromium } from "./chromium";

/**
 * What the dash-hunt*.test.ts files share: `wrangler dev` behind the scripted chat, Anthropic and Responses
 * upstream (tools/test-upstream.ts) and the scripted Gemini model, one short refund conversation imported for
 * each of the four APIs (`POST /api/import`), and headless Chromium. Each file sends its own traffic through
 * the proxy (`useHuntDesk`). Screenshots go to test-output/dashboard/.
 */
export const OUT = resolve(import.meta.dirname, "../../test-output/dashboard");
export const KEY = "sk-dash-hunt";
export const skip = browserSkip("the dash-hunt browser tests");

const SYSTEM = "You are the dash-hunt refund desk.";
const TOOL = { name: "get_order", description: "Look an order up.", parameters: { type: "object", properties: { order_id: { type: "string" } } } };
/** A text answer longer than the 400 characters a node's preview reads of its content. */
export const LONG_ANSWER = `Order A-1 is refunded. ${"The refund goes back to the card the order was paid with and shows up within five working days. ".repeat(5)}`;

/** The conversation of each API as `POST /api/import` takes it, and the request that goes one message past it. */
export const CHAT = {
  model: "hunt-chat",
  tools: [{ type: "function", function: TOOL }],
  messages: [
    { role: "system", content: SYSTEM },
    { role: "user", content: "Refund order #C-1." },
    { role: "assistant", content: null, tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: '{"order_id":"C-1"}' } }] },
    { role: "tool", tool_call_id: "call_0", content: '{"order_id":"C-1","status":"delivered"}' },
    { role: "assistant", content: "Order C-1 is refunded." },
  ],
};
export const ANTHROPIC = {
  model: "hunt-claude",
  params: { "muscle-mem:api": "anthropic", max_tokens: 1024, system: SYSTEM },
  tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.parameters }],
  messages: [
    { role: "user", content: "Refund order #A-1." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_0", name: "get_order", input: { order_id: "A-1" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_0", content: '{"order_id":"A-1","status":"delivered"}' }] },
    { role: "assistant", content: [{ type: "text", text: LONG_ANSWER }] },
  ],
};
export const RESPONSES = {
  model: "hunt-rx",
  params: { "muscle-mem:api": "openai-responses", instructions: SYSTEM },
  tools: [{ type: "function", ...TOOL }],
  input: [
    { role: "user", content: "Refund order #R-1." },
    { type: "function_call", call_id: "call_0", name: "get_order", arguments: '{"order_id":"R-1"}' },
    { type: "function_call_output", call_id: "call_0", output: '{"order_id":"R-1","status":"delivered"}' },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Order R-1 is refunded." }] },
  ],
};
export const GEMINI = {
  model: "hunt-gemini",
  params: { "muscle-mem:api": "gemini", systemInstruction: { parts: [{ text: SYSTEM }] } },
  tools: [{ functionDeclarations: [TOOL] }],
  contents: [
    { role: "user", parts: [{ text: "Refund order #G-1." }] },
    { role: "model", parts: [{ functionCall: { name: "get_order", args: { order_id: "G-1" } } }] },
    { role: "user", parts: [{ functionResponse: { name: "get_order", response: { order_id: "G-1", status: "delivered" } } }] },
    { role: "model", parts: [{ text: "Order G-1 is refunded." }] },
  ],
};

// Set by useHuntDesk's beforeAll; ES module exports are live bindings.
export let dev: WranglerDev;
let browser: Browser;
/** What the admin saw in the tree list of the empty database, before the import (useHuntDesk). */
export let emptyList = "";

/** Sends one request through the proxy as the test tenant; answers its status. */
export async function proxy(path: string, body: unknown, requestId: string): Promise<number> {
  const res = await fetch(`${dev.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "x-api-key": KEY, "x-goog-api-key": KEY, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The requests of each API, as a client sends them, with the frame's parameters spread in. */
export const send = {
  chat: (messages: unknown[], id: string) => proxy("/v1/chat/completions", { model: CHAT.model, tools: CHAT.tools, messages }, id),
  anthropic: (messages: unknown[], id: string) =>
    proxy("/v1/messages", { model: ANTHROPIC.model, max_tokens: 1024, system: SYSTEM, tools: ANTHROPIC.tools, messages }, id),
  responses: (input: unknown[], id: string) => proxy("/v1/responses", { model: RESPONSES.model, instructions: SYSTEM, tools: RESPONSES.tools, input }, id),
  gemini: (contents: unknown[], id: string) =>
    proxy(`/v1beta/models/${GEMINI.model}:generateContent`, { systemInstruction: GEMINI.params.systemInstruction, tools: GEMINI.tools, contents }, id),
};

/** Imports `lines` as the test tenant (`POST /api/import`). */
export async function importLines(lines: unknown[]): Promise<void> {
  const body = lines.map((l) => JSON.stringify(l)).join("\n");
  const res = await fetch(`${dev.url}/api/import`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body });
  if (res.status !== 200) throw new Error(`import answered ${res.status}: ${await res.text()}`);
}

/** Polls the request log until request `id` has its explanation (it is worked out after the response). */
export async function explained(id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${dev.url}/api/requests/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
    if (res.status === 200 && ((await res.json()) as { data: { explanation: unknown } }).data.explanation) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`request ${id} was never explained`);
}

/**
 * Starts the upstreams and `wrangler dev`, imports the four conversations as the test tenant, runs `traffic`,
 * and launches Chromium, before the file's tests; stops them after. Call it inside the file's describe.
 */
export function useHuntDesk(traffic: () => Promise<void>): void {
  let upstream: Awaited<ReturnType<typeof startTestUpstream>> | undefined;
  let gemini: Awaited<ReturnType<typeof startScriptedGeminiModel>> | undefined;
  beforeAll(async () => {
    requireChromium();
    mkdirSync(OUT, { recursive: true });
    upstream = await startTestUpstream(0);
    gemini = await startScriptedGeminiModel({ script: geminiRefundDesk });
    dev = await startWranglerDev({
      vars: { UPSTREAM_BASE_URL: upstream.url, ANTHROPIC_BASE_URL: upstream.url, GEMINI_BASE_URL: gemini.url, IMPORT_TENANTS: "*", COUNTER_FLUSH_MS: "200" },
    });
    browser = await launchChromium();
    emptyList = await adminOnEmpty();
    await importLines([CHAT, ANTHROPIC, RESPONSES, GEMINI]);
    await traffic();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await upstream?.close();
    await gemini?.close();
  });
}

/** The admin's tree list on the empty database (375 px), before anything is imported. */
async function adminOnEmpty(): Promise<string> {
  const { page, close } = await signedIn(375, 740, "dev-admin-token", "#tree-list .empty");
  const text = (await page.locator("#tree-list").textContent()) ?? "";
  await page.screenshot({ path: `${OUT}/dash-hunt-empty-admin-phone.png` });
  await close();
  return text;
}

/** A signed-in page of `width` px (a touch phone below 500) that records console errors and any dialog. */
export async function signedIn(
  width = 1400,
  height = 900,
  token = KEY,
  ready = ".tree-card",
): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const phone = width < 500;
  const context = await browser.newContext({ viewport: { width, height }, isMobile: phone, hasTouch: phone, deviceScaleFactor: phone ? 2 : 1 });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("dialog", (d) => {
    errors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(`${dev.url}/`);
  await page.fill("#token", token);
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector(ready);
  return { page, errors, close: () => context.close() };
}
