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
    // A time of day is ranged: inside the times confirmed it serves, after them it does not.
    expect(served(t, pickup("14:00", "A-104"))).toEqual({ role: "assistant", content: "Pickup booked at 14:00 for A-104." });
    expect(served(t, pickup("18:30", "A-104"))).toBeNull();
  });

  it("Should learn no template where a date and a time vary in tokens of their own (one moment: a deadline)", () => {
    const submit = (date: string, time: string, id: string) =>
      ask(
        "Claims close on 2024-03-07 at 12:00.",
        `File claim ${id} on ${date} ${time}`,
        `${date}T${time}` <= "2024-03-07T12:00" ? `Claim ${id} filed on ${date} ${time}.` : `Claim ${id} is too late (${date} ${time}).`,
      );
    const t = learnAll([submit("2024-03-05", "23:00", "C-101"), submit("2024-03-06", "09:00", "C-102"), submit("2024-03-07", "10:00", "C-103")]);
    expect(served(t, submit("2024-03-07", "23:00", "C-104"))).toBeNull();
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

describe("learned templates never vary a score", () => {
  it("Should not thank a 1/5 rating from thanks for 3/5, 4/5 and 5/5", () => {
    const review = (score: string, id: string) =>
      ask(
        "Thank good ratings (3/5 or more); apologise for the others.",
        `Order ${id}: rated ${score}`,
        Number(score[0]) >= 3 ? `Thanks for your ${score} on ${id}!` : `Sorry about ${id} (${score}).`,
      );
    const t = learnAll([review("3/5", "A-101"), review("4/5", "A-102"), review("5/5", "A-103")]);
    expect(served(t, review("1/5", "A-104"))).toBeNull();
  });
});

describe("learned templates never vary a day and month with no year", () => {
  it("Should not confirm a delivery on 12-28 from deliveries on 11-05, 11-20 and 12-02 (none after 12-20)", () => {
    const deliver = (day: string, id: string) =>
      ask(
        "We deliver until 12-20.",
        `Deliver order ${id} on ${day}`,
        day <= "12-20" ? `Order ${id} will arrive on ${day}.` : `No deliveries on ${day}: ${id} needs another day.`,
      );
    const t = learnAll([deliver("11-05", "A-101"), deliver("11-20", "A-102"), deliver("12-02", "A-103")]);
    expect(served(t, deliver("12-28", "A-104"))).toBeNull();
  });
});

describe("learned templates range a year and month", () => {
  it("Should not open a dispute for 2023-02 from disputes for 2024-07, 2024-09 and 2024-11 (a cut-off at 2024-06)", () => {
    const dispute = (period: string, id: string) =>
      ask(
        "Invoices before 2024-06 cannot be disputed.",
        `Dispute invoice ${id} for ${period}`,
        period >= "2024-06" ? `Dispute opened for ${id} (${period}).` : `${id} (${period}) is too old to dispute.`,
      );
    const t = learnAll([dispute("2024-07", "INV-101"), dispute("2024-09", "INV-102"), dispute("2024-11", "INV-103")]);
    expect(served(t, dispute("2024-08", "INV-104"))).toEqual({ role: "assistant", content: "Dispute opened for INV-104 (2024-08)." });
    expect(served(t, dispute("2023-02", "INV-105"))).toBeNull();
  });
});

describe("learned templates make nothing of a value the model computes (attacks that held)", () => {
  it("Should learn no template for a date plus one day, a total of two amounts or a currency conversion", () => {
    const plus = (d: string, next: string, id: string) =>
      ask("Checkout is the day after check-in.", `Book ${id} checking in ${d}`, `Booked ${id}: check-out ${next}.`);
    expect(learnAll([plus("2024-03-05", "2024-03-06", "B-1"), plus("2024-04-10", "2024-04-11", "B-2"), plus("2024-05-20", "2024-05-21", "B-3")])).toBeNull();
    const total = (a: number, b: number, id: string) => ask("Sum the items.", `Order ${id}: items ${a} and ${b}`, `Order ${id} totals ${a + b}.`);
    expect(learnAll([total(10, 20, "A-1"), total(5, 25, "A-2"), total(12, 18, "A-3")])).toBeNull();
    const eur = (a: number, id: string) => ask("Convert to EUR at 0.9.", `Order ${id} is ${a} USD`, `Order ${id} is ${(a * 0.9).toFixed(2)} EUR.`);
    expect(learnAll([eur(100, "A-1"), eur(250, "A-2"), eur(400, "A-3")])).toBeNull();
  });

  it("Should learn no template for an id with a prefix added or a digit dropped", () => {
    const prefixed = (id: string) => ask("Look the order up.", `Where is ${id}?`, `Tracking ORD-${id}.`);
    expect(learnAll([prefixed("A-1001"), prefixed("A-2002"), prefixed("A-3003")])).toBeNull();
    const dropped = (id: string) => ask("Look the order up.", `Where is ${id}?`, `Tracking ${id.slice(0, -1)}.`);
    expect(learnAll([dropped("A-1001"), dropped("A-2002"), dropped("A-3003")])).toBeNull();
  });
});
