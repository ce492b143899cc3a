import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CanonicalMessage } from "../../src/core/messages";
import { planTemplates, STORE_UNREADABLE } from "../../src/engine/templates";
import { saveTemplates } from "../../src/store/templates/save";
import { keyOfMessages, learnAll, trajectoryOf } from "./template-engine.support";

/**
 * A template store that cannot be read is a miss that says why (`muscle-mem-template-miss`), not a silent
 * one: the engine's learned lookup against real D1, its table renamed away for the length of one lookup
 * (the Worker's cold lookup reads the same table first and bypasses with `lookup_failed`; this is the read
 * after an exact miss, which fails when the store goes away or outlasts its timeout between the two).
 */
const settings = { induction: true, minBindings: 3, declaredMinBindings: 2, maxTried: 32 };

const messagesOf = (id: string): CanonicalMessage[] => [
  { role: "system", content: "Refund the order the user names." },
  { role: "user", content: `Refund order ${id}` },
];
const trajectory = (root: string, id: string) => trajectoryOf(root, messagesOf(id), `Refunded ${id}.`);
const keyOf = (root: string, id: string) => keyOfMessages(root, messagesOf(id));

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
