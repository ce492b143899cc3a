import { describe, expect, it } from "vitest";
import { ask, learnAll, served } from "./templates.serve.support";

/**
 * Wrong replays hunted in learned templates: each workflow is recorded on some values and replayed on
 * others; the scripted model decides, and the template must either render exactly its answer or miss.
 */
describe("learned templates never serve a number written in several tokens", () => {
  const refund = (amount: string, id: string, cents: number, limit: number) =>
    ask(
      `Approve refunds up to ${limit}.`,
      `Refund ${amount} for order ${id}`,
      cents <= limit ? `Approved: refund of ${amount} for ${id}.` : `Escalated: ${amount} for ${id} is over the limit.`,
    );

  it("Should not serve 21,800 from a template confirmed on 12,900, 21,100 and 15,500 (thousands separators)", () => {
    const us = (n: number, id: string) => refund(n.toLocaleString("en-US"), id, n, 21500);
    const t = learnAll([us(12900, "A-101"), us(21100, "A-102"), us(15500, "A-103")]);
    // Inside every part's range, yet above the whole amounts seen: the model escalates it.
    expect(served(t, us(21800, "A-104"))).toBeNull();
  });

  it("Should not serve 21 800 (space-grouped) or 21.800,00 (European) above the amounts seen", () => {
    const spaced = (n: number, id: string) => refund(n.toLocaleString("en-US").replace(",", " "), id, n, 21500);
    expect(served(learnAll([spaced(12900, "A-101"), spaced(21100, "A-102"), spaced(15500, "A-103")]), spaced(21800, "A-104"))).toBeNull();
    const euro = (n: number, id: string) => refund(`${n.toLocaleString("de-DE")},00`, id, n, 21500);
    expect(served(learnAll([euro(12900, "A-101"), euro(21100, "A-102"), euro(15500, "A-103")]), euro(21800, "A-104"))).toBeNull();
  });
});

describe("learned templates never serve a quantity written as an identifier outside what was seen", () => {
  it("Should not book a pickup at 18:30 from bookings at 09:30, 12:15 and 16:45 (pickups end at 17:00)", () => {
    const pickup = (time: string, id: string) =>
      ask(
        "Pickups run until 17:00.",
        `Book a pickup at ${time} for order ${id}`,
        time <= "17:00" ? `Pickup booked at ${time} for ${id}.` : `No pickups after 17:00: ${id} needs another time.`,
      );
    const t = learnAll([pickup("09:30", "A-101"), pickup("12:15", "A-102"), pickup("16:45", "A-103")]);
    expect(served(t, pickup("18:30", "A-104"))).toBeNull();
  });

  it("Should not ship 25kg standard from parcels of 5kg, 12kg and 18kg (standard is up to 20kg)", () => {
    const parcel = (kg: number, id: string) =>
      ask(
        "Standard shipping takes parcels up to 20kg.",
        `Ship parcel ${id} weighing ${kg}kg`,
        kg <= 20 ? `Parcel ${id} (${kg}kg) ships standard.` : `Parcel ${id} (${kg}kg) needs freight.`,
      );
    const t = learnAll([parcel(5, "A-101"), parcel(12, "A-102"), parcel(18, "A-103")]);
    expect(served(t, parcel(25, "A-104"))).toBeNull();
  });
});

describe("learned templates keep a part every confirmed value shared", () => {
  const refund = (order: string) =>
    ask(
      "Refund the order; subscriptions (SUB-) are never refunded.",
      `Refund order ${order}`,
      order.startsWith("SUB-") ? `Order ${order} is a subscription: no refund.` : `Refunded order ${order}.`,
    );

  it("Should not refund SUB-4004 from ORD-1001, ORD-2002 and ORD-3003 (the prefix decides)", () => {
    const t = learnAll([refund("ORD-1001"), refund("ORD-2002"), refund("ORD-3003")]);
    expect(served(t, refund("ORD-4004"))).toEqual({ role: "assistant", content: "Refunded order ORD-4004." });
    expect(served(t, refund("SUB-4004"))).toBeNull();
  });

  it("Should keep refusing SUB- once the model held one, even after another prefix confirmed the template", () => {
    const t = learnAll([refund("ORD-1001"), refund("ORD-2002"), refund("ORD-3003"), refund("SUB-3103"), refund("INV-5005")]);
    // The prefixes varied among the confirmations (ORD, INV): a prefix is data now, but for the one the model refused.
    expect(served(t, refund("INV-6006"))).toEqual({ role: "assistant", content: "Refunded order INV-6006." });
    expect(served(t, refund("SUB-4004"))).toBeNull();
  });

  it("Should not welcome a free-mail address from sign-ups that all had the company's domain", () => {
    const signup = (email: string) =>
      ask(
        "Sign up work emails only; refuse gmail.com.",
        `Sign me up: ${email}`,
        email.endsWith("@gmail.com") ? `Sorry, ${email} is not a work email.` : `Welcome aboard, ${email}!`,
      );
    const t = learnAll([signup("ada@acme.com"), signup("bob@acme.com"), signup("cyd@acme.com")]);
    expect(served(t, signup("dan@acme.com"))).toEqual({ role: "assistant", content: "Welcome aboard, dan@acme.com!" });
    expect(served(t, signup("dan@gmail.com"))).toBeNull();
  });
});

describe("learned templates keep whether two slots of a type were equal", () => {
  const transfer = (from: string, to: string) =>
    ask(
      "Move money between the customer's accounts.",
      `Transfer 50 from ${from} to ${to}`,
      from === to ? `${from} and ${to} are the same account: nothing to move.` : `Moved 50 from ${from} to ${to}.`,
    );

  it("Should not serve a transfer from an account to itself from transfers between two accounts", () => {
    const t = learnAll([transfer("AC-1001", "AC-2002"), transfer("AC-3003", "AC-4004"), transfer("AC-5005", "AC-6006")]);
    expect(served(t, transfer("AC-7007", "AC-8008"))).toEqual({ role: "assistant", content: "Moved 50 from AC-7007 to AC-8008." });
    expect(served(t, transfer("AC-7007", "AC-7007"))).toBeNull();
  });

  it("Should not serve a transfer into the savings account from itself when every confirmed source was another account", () => {
    const t = learnAll([transfer("AC-1001", "AC-9999"), transfer("AC-3003", "AC-9999"), transfer("AC-5005", "AC-9999")]);
    expect(served(t, transfer("AC-7007", "AC-9999"))).toEqual({ role: "assistant", content: "Moved 50 from AC-7007 to AC-9999." });
    expect(served(t, transfer("AC-9999", "AC-9999"))).toBeNull();
  });
});
