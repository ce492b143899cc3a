import { describe, expect, it } from "vitest";
import { dev, login, newPage, skip, tapOrClick, until, useUsableDesk, WIDTHS } from "./usable-desk";

/**
 * Why it missed, on the dashboard, for a miss whose every message matched (docs/api.md "Why it missed",
 * `answers`): the log's line and the panel say no answer is recorded there yet, where they said
 * "recorded, not served yet" before; a bypass row gives its reason to its own tenant. Headless Chromium
 * against `wrangler dev` (test/browser/usable-desk.ts).
 */
const KEY = "sk-usable-test";
const MODEL = "gpt-4o-mini";
const SYSTEM = { role: "system", content: "You are the why-hunt desk." };

async function chatOnce(body: unknown, id: string): Promise<void> {
  const res = await fetch(`${dev.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": id },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
}

async function rowOf(id: string): Promise<{ explanation: { kind: string; answers: number | null } | null; reason: string | null } | null> {
  const res = await fetch(`${dev.url}/api/requests/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
  return res.status === 200
    ? ((await res.json()) as { data: { explanation: { kind: string; answers: number | null } | null; reason: string | null } }).data
    : null;
}

describe.skipIf(skip)("why it missed, on the dashboard: every message matched", () => {
  useUsableDesk(async () => {
    const full = { model: MODEL, messages: [SYSTEM, { role: "user", content: "first" }] };
    await chatOnce(full, "why-hunt-full");
    // Recorded: an only-if-cached ask is served.
    await until(
      async () => {
        const res = await fetch(`${dev.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "cache-control": "only-if-cached" },
          body: JSON.stringify(full),
        });
        await res.arrayBuffer();
        return res.status;
      },
      (status) => status === 200,
    );
    await chatOnce({ model: MODEL, messages: [SYSTEM] }, "why-hunt-prefix");
    await until(
      () => rowOf("why-hunt-prefix"),
      (row) => row?.explanation?.kind === "unconfirmed",
    );
    await chatOnce({ model: MODEL, n: 2, messages: [{ role: "user", content: "two please" }] }, "why-hunt-bypass");
    await until(
      () => rowOf("why-hunt-bypass"),
      (row) => row !== null,
    );
  });

  it("Should say no answer is recorded there yet, in the log and in the panel, and give a bypass's reason (1024 px)", async () => {
    const { page, errors, close } = await newPage(WIDTHS[1]);
    await login(page);
    const line = page.locator("#requests-pane .request[data-outcome=miss]", { hasText: "every message recorded, no answer there yet" }).first();
    await line.waitFor();
    await page.locator("#requests-pane .request[data-outcome=bypass]", { hasText: "bypass: n > 1" }).first().waitFor();
    await tapOrClick(page, "#requests-pane .request[data-outcome=miss]:has-text('every message recorded, no answer there yet')", false);
    await page.waitForSelector("#node-panel:not([hidden]) #why-answers");
    expect(await page.locator("#why-kind").textContent()).toBe("unconfirmed");
    expect(await page.locator("#why-answers").textContent()).toBe("none recorded yet");
    expect(errors).toEqual([]);
    await close();
  });
});
