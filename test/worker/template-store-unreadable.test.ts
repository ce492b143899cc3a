import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ToolCallIds } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import type { RequestKey } from "../../src/cache/request-key";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { planTemplates, STORE_UNREADABLE } from "../../src/engine/templates";
import { saveTemplates } from "../../src/store/templates/save";

/**
 * A template store that cannot be read is a miss that says why (`muscle-mem-template-miss`), not a silent
 * one: the engine's learned lookup against real D1, its table renamed away for the length of one lookup
 * (the Worker's cold lookup reads the same table first and bypasses with `lookup_failed`; this is the read
 * after an exact miss, which fails when the store goes away or outlasts its timeout between the two).
 */
const meta = { finishReason: "stop", promptTokens: 10, completionTokens: 2, latencyMs: 50 };
const settings = { induction: true, minBindings: 3, declaredMinBindings: 2, maxTried: 32 };

const messagesOf = (id: string): CanonicalMessage[] => [
  { role: "system", content: "Refund the order the user names." },
  { role: "user", content: `Refund order ${id}` },
];

function trajectory(root: string, id: string): Trajectory {
  const messages = messagesOf(id);
  return { root, hashes: walk(root, messages).map((s) => s.hash), messages, answer: { role: "assistant", content: `Refunded ${id}.` }, meta };
}

function keyOf(root: string, id: string): RequestKey {
  const path = walk(root, messagesOf(id));
  return { tenant: "t", namespace: "default", treeId: root, frameJson: "{}", model: "m", path, key: path[path.length - 1].hash, ids: new ToolCallIds() };
}

function learnAll(ts: readonly Trajectory[]): LearnedTemplate {
  const t = induce(ts[0], ts[1]);
  if (!t) throw new Error("no template");
  for (const other of ts.slice(2)) t.state = weigh(t, other).state;
  return t;
}

describe("a template store that cannot be read", () => {
  it("Should serve nothing and give the reason, where a readable store serves the same request", async () => {
    const root = crypto.randomUUID().replace(/-/g, "");
    await saveTemplates(env.DB, [learnAll(["A-101", "A-102", "A-103"].map((id) => trajectory(root, id)))], []);
    const readable = planTemplates(keyOf(root, "A-104"), null, new Headers(), settings);
    expect((await readable.learned(env.DB, 5000, 0, true))?.answer.message).toEqual({ role: "assistant", content: "Refunded A-104." });
    expect(readable.templateMiss()).toBeNull();

    const plan = planTemplates(keyOf(root, "A-105"), null, new Headers(), settings);
    await env.DB.exec("ALTER TABLE templates RENAME TO templates_unreadable");
    try {
      expect(await plan.learned(env.DB, 5000, 0, true)).toBeNull();
    } finally {
      await env.DB.exec("ALTER TABLE templates_unreadable RENAME TO templates");
    }
    expect(plan.templateMiss()).toBe(STORE_UNREADABLE);
  });
});
