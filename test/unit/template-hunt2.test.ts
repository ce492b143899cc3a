import { describe, expect, it } from "vitest";
import type { LearnedTemplate, Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { tiedWords } from "../../src/cache/templates/name-ties";
import { serveLearned } from "../../src/cache/templates/serve";
import { ask, learnAll, served } from "./templates.serve.support";

/** served(), with the words the request ties to an identity (what the Worker passes: learned-answer.ts), so that a word slot may serve. */
function servedTied(t: LearnedTemplate | null, request: Trajectory) {
  return t && (serveLearned([t], request.messages.map(decompose), 3, () => tiedWords(request.messages))?.message ?? null);
}

/**
 * The template hunt's open leads (docs/templates.md "What this does not catch"), each recorded on some
 * values and replayed on others: the scripted model decides, and a template must render exactly its
 * answer or miss.
 */
describe("an identifier with a short number (a level: Tier2, v3, L4) is ranged by its number", () => {
  const upgrade = (tier: string, id: string, top = 3) =>
    ask(
      `Upgrades are approved up to Tier${top}.`,
      `Upgrade order ${id} to ${tier}`,
      Number(tier.slice(4)) <= top ? `Upgraded ${id} to ${tier}.` : `${tier} needs a manager: ${id} not upgraded.`,
    );

  it("Should not upgrade to Tier5 from upgrades to Tier1, Tier3 and Tier2 (the model approves up to Tier3)", () => {
    const t = learnAll([upgrade("Tier1", "A-101"), upgrade("Tier3", "A-102"), upgrade("Tier2", "A-103")]);
    expect(served(t, upgrade("Tier5", "A-104"))).toBeNull();
    expect(served(t, upgrade("Tier10", "A-104"))).toBeNull();
  });

  it("Should serve a level inside those confirmed (ranged, not fixed): Tier2 and Tier3 from Tier1, Tier5 and Tier4", () => {
    const t = learnAll([upgrade("Tier1", "A-101", 5), upgrade("Tier5", "A-102", 5), upgrade("Tier4", "A-103", 5)]);
    expect(served(t, upgrade("Tier2", "A-104", 5))).toEqual({ role: "assistant", content: "Upgraded A-104 to Tier2." });
    expect(served(t, upgrade("Tier3", "A-104", 5))).toEqual({ role: "assistant", content: "Upgraded A-104 to Tier3." });
    expect(served(t, upgrade("Tier0", "A-104", 5))).toBeNull();
  });

  it("Should still serve an id of many digits outside those seen (an id is drawn at random)", () => {
    const refund = (id: string) => ask("Refund desk.", `Refund order ${id}`, `Refunded order ${id}.`);
    const t = learnAll([refund("A-1042"), refund("A-2210"), refund("A-3301")]);
    expect(served(t, refund("A-9876"))).toEqual({ role: "assistant", content: "Refunded order A-9876." });
  });
});

describe("an identifier whose letters varied among the confirmed values", () => {
  const refund = (id: string) =>
    ask(
      "Refund the order; subscriptions (SUB-) are never refunded.",
      `Refund order ${id}`,
      id.startsWith("SUB-") ? `Order ${id} is a subscription: no refund.` : `Refunded order ${id}.`,
    );

  it("Should not refund SUB-4004 from A-1042, B-2203 and C-3301 (letters never seen, of another length)", () => {
    const t = learnAll([refund("A-1042"), refund("B-2203"), refund("C-3301")]);
    expect(served(t, refund("SUB-4004"))).toBeNull();
    expect(served(t, refund("D-4004"))).toEqual({ role: "assistant", content: "Refunded order D-4004." });
  });

  it("Still serves letters never seen of a confirmed length (what this does not catch): S-4004 is data like A-, B-, C-", () => {
    const t = learnAll([refund("A-1042"), refund("B-2203"), refund("C-3301")]);
    expect(served(t, refund("S-4004"))).toEqual({ role: "assistant", content: "Refunded order S-4004." });
  });
});

describe("the hunt's last leads: a European day and month, a currency glued to an amount, a word after a tied name", () => {
  it("Should not file a claim dated 15.04 from claims dated 05.03, 12.03 and 20.03 (claims close on 31.03)", () => {
    const claim = (date: string, id: string) => {
      const [d, m] = date.split(".").map(Number);
      return ask(
        "Claims close on 31.03.",
        `File claim ${id} dated ${date}`,
        m * 100 + d <= 331 ? `Claim ${id} filed for ${date}.` : `Claim ${id} is too late (${date}).`,
      );
    };
    const t = learnAll([claim("05.03", "C-101"), claim("12.03", "C-102"), claim("20.03", "C-103")]);
    expect(served(t, claim("15.04", "C-104"))).toBeNull();
  });

  it("Should not approve EUR250 from approvals of EUR105, EUR180 and EUR120 (the model approves up to EUR200)", () => {
    const refund = (amount: string, id: string) =>
      ask(
        "Approve refunds up to EUR200.",
        `Refund ${amount} for order ${id}`,
        Number(amount.slice(3)) <= 200 ? `Approved: ${amount} for ${id}.` : `Escalated: ${amount} for ${id}.`,
      );
    const t = learnAll([refund("EUR105", "A-101"), refund("EUR180", "A-102"), refund("EUR120", "A-103")]);
    expect(served(t, refund("EUR250", "A-104"))).toBeNull();
  });

  it("Should not serve the paid shipping of Gold, Silver and Bronze to Platinum after a tied name (Ada Lovelace Platinum)", () => {
    const plan = (first: string, last: string, tier: string) => {
      const email = `${first.toLowerCase()}@example.com`;
      const shipping = tier === "Platinum" ? "Free shipping" : "Shipping costs 5";
      return ask(
        "Platinum members get free shipping.",
        `I'm ${first} ${last} ${tier}, ${email}: ship my order`,
        `${shipping} for ${first} ${last} ${tier} (${email}).`,
      );
    };
    // The plan follows the tied name: it was tied too, and Platinum was served the paid shipping.
    const t = learnAll([plan("Ada", "Lovelace", "Gold"), plan("Bob", "Stone", "Silver"), plan("Cyd", "Moss", "Bronze")]);
    expect(servedTied(t, plan("Dan", "Roe", "Platinum"))).toBeNull();
    // The first and last names still vary where the plan is a literal.
    const gold = learnAll([plan("Ada", "Lovelace", "Gold"), plan("Bob", "Stone", "Gold"), plan("Cyd", "Moss", "Gold")]);
    expect(servedTied(gold, plan("Dan", "Roe", "Gold"))).toEqual({ role: "assistant", content: "Shipping costs 5 for Dan Roe Gold (dan@example.com)." });
  });
});
