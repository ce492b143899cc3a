import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium, which the browser tests drive (never a downloaded browser; .ci/run installs it). */
export const CHROMIUM = "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Whether to skip `what`: only when Chromium is missing and MM_SKIP_BROWSER=1 says so on purpose (warned). */
export function browserSkip(what: string): boolean {
  const skip = !existsSync(CHROMIUM) && process.env.MM_SKIP_BROWSER === "1";
  if (skip) console.warn(`[browser] ${CHROMIUM} is missing and MM_SKIP_BROWSER=1: skipping ${what}.`);
  return skip;
}

/** Fails at once, before a file starts its Worker, when Chromium is missing (and not skipped on purpose). */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set MM_SKIP_BROWSER=1 to skip on purpose)`);
}

/** Headless Chromium with the flags every browser test uses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
