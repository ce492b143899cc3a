import { describe, expect, it } from "vitest";
import { decompose } from "../../src/cache/templates/leaves";
import { slotTypeOf } from "../../src/cache/templates/slot-types";
import { ask, learnAll, wrongOrMiss } from "./templates.serve.support";

/**
 * Reach: values the template rules misread, so a request that could have been served went to the model (none was a
 * wrong serve). Each reading is shown serving, then shown unable to serve a value of the same look that means
 * something else (the scripted rule decides; a served answer must be the model's own, or the test fails).
 */
describe("a decimal a `%` follows is a percentage, not a day and month", () => {
  /** Fee tiers over 3% need approval; the desk copies the tier. */
  const fee = (invoice: string, tier: string) =>
    ask(
      "Fee tiers over 3% need approval.",
      `Apply the ${tier}% tier to ${invoice}.`,
      Number(tier) > 3 ? `${invoice}: sent for approval.` : `${invoice}: ${tier}% applied.`,
    );
  const train = [fee("INV-10001", "2.5"), fee("INV-10002", "1.2"), fee("INV-10003", "2.8")];

  it("Should read `2.5%` as the number 2.5 (it read as the 2nd of May, a local date, and made no template)", () => {
    expect(decompose({ role: "user", content: "Apply the 2.5% tier." }).leaves.map((l) => [l.value, slotTypeOf(l.value, l.kind)])).toContainEqual([
      "2.5",
      "number",
    ]);
    expect(learnAll(train)).not.toBeNull();
    expect(wrongOrMiss(train, fee("INV-10004", "1.5")).served).toBe("INV-10004: 1.5% applied.");
  });

  it("Should miss a tier above every confirmed one (3.5%: approval) and one of more decimals", () => {
    expect(wrongOrMiss(train, fee("INV-10004", "3.5"))).toEqual({ served: null, model: "INV-10004: sent for approval." });
    expect(wrongOrMiss(train, fee("INV-10004", "2.75")).served).toBeNull();
  });

  it("Should still read a day and month with no `%` after it as a local date, never a slot", () => {
    const deliver = (order: string, day: string) => ask("Deliveries.", `Deliver ${order} on ${day}.`, `${order}: booked for ${day}.`);
    const dates = [deliver("A-1001", "2.5"), deliver("A-1002", "1.2"), deliver("A-1003", "2.8")];
    expect(learnAll(dates)).toBeNull();
    expect(slotTypeOf("20.3")).toBe("local-date");
    // The percentages' template never binds a request without the `%` (another skeleton): `2.3` there is a date.
    const noPercent = ask("Fee tiers over 3% need approval.", "Apply the 2.3 tier to INV-10004.", "INV-10004: 2.3% applied.");
    expect(wrongOrMiss(train, noPercent).served).toBeNull();
  });

  it("Should keep `1.250%` a quantity (many locales write 1250 so), never a slot", () => {
    const leaves = decompose({ role: "user", content: "Apply the 1.250% tier." }).leaves;
    expect(leaves.map((l) => slotTypeOf(l.value, l.kind))).toContain("quantity");
  });
});

describe("three numbers joined by dots that no date writes so are a version", () => {
  /** Versions before 2.4.0 are not installed; the desk copies the version. */
  const upgrade = (ticket: string, version: string) => {
    const [major, minor] = version.split(".").map(Number);
    const old = major < 2 || (major === 2 && minor < 4);
    return ask(
      "Versions before 2.4.0 are not installed.",
      `${ticket}: upgrade the agent on web-03 to ${version}.`,
      old ? `${ticket}: ${version} is older than the supported 2.4.0.` : `${ticket}: agent ${version} scheduled on web-03.`,
    );
  };
  const train = [upgrade("INC0010001", "2.4.3"), upgrade("INC0010002", "2.6.0"), upgrade("INC0010003", "2.5.1")];

  it("Should read `2.6.0` as a version, a level ranged number by number (it read as a local date and made no template)", () => {
    expect(slotTypeOf("2.6.0")).toBe("identifier");
    expect(learnAll(train)).not.toBeNull();
    expect(wrongOrMiss(train, upgrade("INC0010004", "2.5.0")).served).toBe("INC0010004: agent 2.5.0 scheduled on web-03.");
    expect(wrongOrMiss(train, upgrade("INC0010004", "2.4.3")).served).toBe("INC0010004: agent 2.4.3 scheduled on web-03.");
  });

  it("Should miss a version below, above or beside the confirmed ones (2.3.9 is too old; 3.0.0, 2.7.0, 2.5.10 never confirmed)", () => {
    expect(wrongOrMiss(train, upgrade("INC0010004", "2.3.9"))).toEqual({ served: null, model: "INC0010004: 2.3.9 is older than the supported 2.4.0." });
    expect(wrongOrMiss(train, upgrade("INC0010004", "1.9.9"))).toEqual({ served: null, model: "INC0010004: 1.9.9 is older than the supported 2.4.0." });
    for (const v of ["3.0.0", "2.7.0", "2.5.10", "2.4.30"]) expect(wrongOrMiss(train, upgrade("INC0010004", v)).served, v).toBeNull();
  });

  it("Should keep reading a date written with dots as a local date, never a slot (a year of 2 or 4 digits at either end)", () => {
    for (const d of ["5.3.24", "05.03.2024", "24.3.5", "2024.3.5", "12.5.1", "1.2.30"]) expect(slotTypeOf(d), d).toBe("local-date");
    for (const d of ["2/6/0", "2-6-0"]) expect(slotTypeOf(d), d).toBe("local-date");
    // A date in the version's place never binds to the version slot: a miss, whatever the model says.
    const dated = ask(
      "Versions before 2.4.0 are not installed.",
      "INC0010004: upgrade the agent on web-03 to 5.3.24.",
      "INC0010004: agent 5.3.24 scheduled on web-03.",
    );
    expect(wrongOrMiss(train, dated).served).toBeNull();
  });
});

describe("a version inside an identifier is ranged like a version alone", () => {
  /** A package URL whose extension varies; the version is written only there. */
  const install = (ticket: string, file: string) => {
    const [, major, minor] = /(\d)\.(\d+)\.\d/.exec(file) ?? [];
    const old = Number(major) < 2 || (Number(major) === 2 && Number(minor) < 4);
    return ask(
      "Versions before 2.4.0 are not installed.",
      `${ticket}: install https://mirror.example.org/pkgs/${file} now.`,
      old ? `${ticket}: too old.` : `${ticket}: scheduled mirror.example.org/pkgs/${file}.`,
    );
  };
  const train = [install("INC-10001", "agent-2.5.1.deb"), install("INC-10002", "agent-2.6.0.rpm"), install("INC-10003", "agent-2.4.3.msi")];

  it("Should not schedule agent-2.3.9.deb after .deb, .rpm and .msi packages of 2.4.3..2.6.0 (its digits were an id's)", () => {
    expect(wrongOrMiss(train, install("INC-10004", "agent-2.3.9.deb"))).toEqual({ served: null, model: "INC-10004: too old." });
    expect(wrongOrMiss(train, install("INC-10004", "agent-2.7.0.rpm")).served).toBeNull();
  });

  it("Should still serve a version between the confirmed ones, and an IPv4-like run is no version", () => {
    expect(wrongOrMiss(train, install("INC-10004", "agent-2.5.0.deb")).served).toBe("INC-10004: scheduled mirror.example.org/pkgs/agent-2.5.0.deb.");
    const fetch = (ticket: string, host: string) =>
      ask("Hosts.", `${ticket}: fetch from ${host}-a.example.org now.`, `${ticket}: fetched from ${host}-a.example.org.`);
    const hosts = [fetch("INC-10001", "h10.1.2.31"), fetch("INC-10002", "g10.1.2.32"), fetch("INC-10003", "k10.1.2.33")];
    expect(wrongOrMiss(hosts, fetch("INC-10004", "m10.1.2.99")).served).toBe("INC-10004: fetched from m10.1.2.99-a.example.org.");
  });
});

describe("an amount grouped with commas and written with a decimal point is one number", () => {
  /** Amounts over 10,000.00 go to review; the desk copies the amount as written. */
  const pay = (invoice: string, amount: string) =>
    ask(
      "Amounts over 10,000.00 go to review.",
      `Pay ${invoice}: ${amount} EUR.`,
      Number(amount.replace(/,/g, "")) > 10000 ? `${invoice}: sent to review.` : `${invoice}: paid ${amount} EUR.`,
    );
  const train = [pay("INV-10001", "1,250.00"), pay("INV-10002", "9,100.50"), pay("INV-10003", "4,250.00")];

  it("Should read `4,250.00` as the number 4250 (its groups were two leaves that never vary, so no template)", () => {
    expect(decompose({ role: "user", content: "Pay 4,250.00 EUR." }).leaves.map((l) => l.value)).toEqual(["Pay", "4,250.00", "EUR"]);
    expect(slotTypeOf("4,250.00")).toBe("number");
    expect(learnAll(train)).not.toBeNull();
    expect(wrongOrMiss(train, pay("INV-10004", "3,000.00")).served).toBe("INV-10004: paid 3,000.00 EUR.");
  });

  it("Should miss an amount above the confirmed ones (12,500.00: review) and every other way of writing one", () => {
    expect(wrongOrMiss(train, pay("INV-10004", "12,500.00"))).toEqual({ served: null, model: "INV-10004: sent to review." });
    expect(wrongOrMiss(train, pay("INV-10004", "1,000,250.00"))).toEqual({ served: null, model: "INV-10004: sent to review." });
    // Without a decimal point `4,250` may be 4.25 (a decimal comma); with the point first it is grouped the other way.
    for (const v of ["4,250", "4.250,00", "4,25,000.00", "4250.00", "4,250.0"]) expect(wrongOrMiss(train, pay("INV-10004", v)).served, v).toBeNull();
    expect(slotTypeOf("4,250")).toBe("quantity");
  });

  it("Should keep a grouped amount glued to letters or to more digits out of the reading", () => {
    expect(decompose({ role: "user", content: "Pay 4,250.00EUR or 4,250.00.5 or x-4,250.00." }).leaves.map((l) => l.value)).not.toContain("4,250.00");
  });
});

describe("digits after a word that names a code, or three digits in parentheses, are a code", () => {
  it("Should not pay at `merchant category 6011` (cash) after 5411, 7011 and 5812 (ranged, it lay between them)", () => {
    const pay = (invoice: string, mcc: string) =>
      ask(
        "Categories 6011 and 7995 are refused.",
        `Pay ${invoice} at merchant category ${mcc}.`,
        mcc === "6011" ? `${invoice}: refused.` : `${invoice}: paid, category ${mcc}.`,
      );
    const train = [pay("INV-10001", "5411"), pay("INV-10002", "7011"), pay("INV-10003", "5812")];
    expect(wrongOrMiss(train, pay("INV-10004", "6011"))).toEqual({ served: null, model: "INV-10004: refused." });
    expect(wrongOrMiss(train, pay("INV-10004", "5411")).served).toBe("INV-10004: paid, category 5411.");
  });

  it("Should not clear a phone in area (808) (Hawaii) after (212), (917) and (415)", () => {
    const check = (invoice: string, phone: string) =>
      ask(
        "Vendors in Hawaii are held.",
        `${invoice}: vendor phone ${phone}.`,
        phone.startsWith("(808)") ? `${invoice}: held.` : `${invoice}: cleared, ${phone}.`,
      );
    const train = [check("INV-10001", "(212) 555-0100"), check("INV-10002", "(917) 555-0142"), check("INV-10003", "(415) 555-0199")];
    expect(wrongOrMiss(train, check("INV-10004", "(808) 555-0123"))).toEqual({ served: null, model: "INV-10004: held." });
    expect(wrongOrMiss(train, check("INV-10004", "(415) 555-0123")).served).toBe("INV-10004: cleared, (415) 555-0123.");
  });

  it("Should keep digits after any other word, or of another length in parentheses, ranged as before", () => {
    const look = (order: string) => ask("Orders.", `Look up order ${order} (${order}).`, `Order ${order} found.`);
    const train = [look("48213"), look("51007"), look("60042")];
    expect(wrongOrMiss(train, look("55555")).served).toBe("Order 55555 found.");
  });
});
