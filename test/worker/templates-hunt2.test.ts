import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import type { LearnedTemplate } from "../../src/cache/templates/induce";
import { planTemplates } from "../../src/engine/templates";
import { saveTemplates } from "../../src/store/templates/save";
import { keyOfMessages, learnAll, trajectoryOf } from "./template-engine.support";

/**
 * The template hunt's open leads through the engine and real D1: what a lookup reads of the templates
 * stored at a node (docs/templates.md "Cost": a bounded read).
 */
/** As src/config.ts ships them: a lookup tries at most 32 templates (learning weighs as many). */
const settings = { induction: true, minBindings: 3, declaredMinBindings: 2, maxTried: 32 };

const messagesOf = (amount: number, id: string): CanonicalMessage[] => [
  { role: "system", content: "Approve refunds up to 500." },
  { role: "user", content: `Refund ${amount} for order ${id}` },
];

const trajectory = (root: string, amount: number, id: string, answer: string) => trajectoryOf(root, messagesOf(amount, id), answer);
const keyOf = (root: string, amount: number, id: string) => keyOfMessages(root, messagesOf(amount, id));

const approve = (root: string, amount: number, id: string) => trajectory(root, amount, id, `Approved: refund of ${amount} for ${id}.`);
const escalate = (root: string, amount: number, id: string) => trajectory(root, amount, id, `Escalated: ${amount} for ${id} needs a manager.`);

async function lookup(root: string, amount: number, id: string): Promise<string | null> {
  const found = await planTemplates(keyOf(root, amount, id), null, new Headers(), settings).learned(env.DB, 5000);
  return found ? canonicalJson(found.answer.message) : null;
}

const approving = (root: string) =>
  learnAll([approve(root, 100, "A-101"), approve(root, 300, "A-102"), approve(root, 200, "A-103"), approve(root, 250, "A-104")]);
const escalating = (root: string) => learnAll([escalate(root, 120, "A-201"), escalate(root, 280, "A-202"), escalate(root, 190, "A-203")]);
/** `n` live copies of a template (ids of their own): stored templates at one node that a lookup reads in turn. */
const copies = (t: LearnedTemplate, n: number) => Array.from({ length: n }, (_, i) => ({ ...t, id: `${t.id}-${i}` }));

describe("a lookup serves only when it read every live template at the node", () => {
  it("Should not serve when a template past those a lookup tries renders another answer for the request", async () => {
    const root = crypto.randomUUID().replace(/-/g, "");
    const approves = approving(root);
    const escalates = escalating(root);
    expect(escalates.lookupKey).toBe(approves.lookupKey);
    // As many live templates that approve as a lookup tries (more bindings: read first), then one that escalates.
    await saveTemplates(env.DB, [...copies(approves, settings.maxTried), escalates], []);
    // Both kinds fit 220: the escalating one was not read before the fix, and the approval was served.
    expect(await lookup(root, 220, "A-301")).toBeNull();
  });

  it("Should not serve when the node holds one template more than a lookup tries, even if those read agree", async () => {
    const root = crypto.randomUUID().replace(/-/g, "");
    await saveTemplates(env.DB, copies(approving(root), settings.maxTried + 1), []);
    expect(await lookup(root, 220, "A-301")).toBeNull();
  });

  it("Should miss when every template was read and two that fit disagree, and serve when they agree", async () => {
    const root = crypto.randomUUID().replace(/-/g, "");
    await saveTemplates(env.DB, [...copies(approving(root), settings.maxTried - 1), escalating(root)], []);
    expect(await lookup(root, 220, "A-301")).toBeNull();
    const agreeing = crypto.randomUUID().replace(/-/g, "");
    await saveTemplates(env.DB, copies(approving(agreeing), settings.maxTried), []);
    expect(await lookup(agreeing, 220, "A-301")).toBe(canonicalJson({ role: "assistant", content: "Approved: refund of 220 for A-301." }));
  });
});
