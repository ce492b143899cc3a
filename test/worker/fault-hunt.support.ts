import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";

/** Vars that make every lookup read D1 (no isolate memory, no colo layer), so a damaged row is what the lookup sees. */
export const COLD = { HOT_CACHE_TTL_MS: "0", COLO_CACHE_TTL_MS: "0" };

/** The hash of the one answer node whose stored message contains `text`. */
export async function answerNode(text: string): Promise<string> {
  const row = await env.DB.prepare("SELECT hash FROM nodes WHERE role = 'assistant' AND instr(message, ?1) > 0").bind(text).first<{ hash: string }>();
  if (!row) throw new Error(`no answer node holds ${text}`);
  return row.hash;
}

/**
 * Writes `message` into an answer node with SQL (damage as an older version, a
 * bad migration or a hand edit leaves it), then resets the tree objects, so
 * that no object serves the answer it recorded from its memory.
 */
export async function damage(hash: string, message: string): Promise<void> {
  await env.DB.prepare("UPDATE nodes SET message = ?1 WHERE hash = ?2").bind(message, hash).run();
  await abortAllDurableObjects();
}

/** The structured log lines printed while `work` runs. */
export async function logsDuring<T>(work: () => Promise<T>): Promise<{ result: T; events: Array<Record<string, unknown>> }> {
  const printed: string[] = [];
  const spies = (["log", "warn", "error"] as const).map((stream) =>
    vi.spyOn(console, stream).mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(" "))),
  );
  try {
    const result = await work();
    const events = printed.filter((p) => p.startsWith("{")).map((p) => JSON.parse(p) as Record<string, unknown>);
    return { result, events };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}
