import { describe, expect, it } from "vitest";
import type { Trajectory } from "../../src/cache/templates/induce";
import { ask, learnAll, served } from "./templates.serve.support";

/**
 * The fifth template hunt (a payments desk, tools/eval-workflows/pay.ts): a cut-off in UTC, a ZIP+4, and the
 * kinds of payment values that held. Each `null` below was served the wrong answer before its rule.
 */
const wrongOrMiss = (train: readonly Trajectory[], request: Trajectory) => {
  const got = served(learnAll(train), request);
  return { served: got === null ? null : got.content, model: request.answer.content };
};

describe("a date-time's time of day is ranged in UTC too", () => {
  /** Requests received at or after 17:00 UTC miss the day's cut-off. */
  const receive = (ref: string, at: string) =>
    ask(
      "The cut-off is 17:00 UTC.",
      `${ref} received ${at}`,
      new Date(at).getUTCHours() >= 17 ? `${ref}: after the cut-off; next business day.` : `${ref}: booked for today, received ${at}.`,
    );
  const train = [
    receive("PAY-10000001", "2026-12-04T09:00:00-05:00"),
    receive("PAY-10000002", "2026-12-08T16:45:00Z"),
    receive("PAY-10000003", "2026-12-10T11:30:00+01:00"),
    receive("PAY-10000004", "2026-12-09T14:00:00Z"),
  ];

  it("Should not book 12:30-05:00 (17:30 UTC) for today: its written time lay between 09:00 and 16:45", () => {
    expect(wrongOrMiss(train, receive("PAY-10000009", "2026-12-07T12:30:00-05:00"))).toEqual({
      served: null,
      model: "PAY-10000009: after the cut-off; next business day.",
    });
  });

  it("Should serve another offset whose time of day lies inside those confirmed as written and in UTC", () => {
    expect(wrongOrMiss(train, receive("PAY-10000009", "2026-12-07T10:00:00-05:00")).served).toBe(
      "PAY-10000009: booked for today, received 2026-12-07T10:00:00-05:00.",
    );
  });
});

describe("an identifier of digits only is a code: its first run must be confirmed", () => {
  const pay = (invoice: string, zip: string) =>
    ask("Vendors in Hawaii are held.", `Pay ${invoice} to ZIP+4 ${zip}`, zip.startsWith("968") ? `${invoice}: held.` : `${invoice}: paid to ${zip}.`);
  const train = [pay("INV-10001", "94105-1234"), pay("INV-10002", "98101-0001"), pay("INV-10003", "60601-4321")];

  it("Should not pay 96813-1234 (Hawaii) after mainland ZIP+4s (as an id, its digits were served outside those seen)", () => {
    expect(wrongOrMiss(train, pay("INV-10004", "96813-1234"))).toEqual({ served: null, model: "INV-10004: held." });
    expect(wrongOrMiss(train, pay("INV-10004", "98101-7777")).served).toBe("INV-10004: paid to 98101-7777.");
  });
});

describe("payment values that held", () => {
  const decide = (rule: (v: string) => boolean) => (invoice: string, v: string) =>
    ask("Treasury rules.", `Pay ${invoice}: ${v}`, rule(v) ? `${invoice}: held.` : `${invoice}: paid, ${v}.`);

  it("Should miss an IBAN or BIC of another country, a grouped or negative amount, a finer FX rate, a weekend, 17:01", () => {
    const cases: Array<[(v: string) => boolean, string[], string[]]> = [
      [(v) => !/^(DE|FR|NL)/.test(v), ["DE89370400440532013000", "FR1420041010050500013000", "NL91ABNA0417164300"], ["IR062960000000100324200001"]],
      [(v) => v.slice(4, 6) === "IR", ["DEUTDEFF500", "BNPAFRPP123", "INGBNL2A"], ["MELIIRTH001", "DEUTIRFF500"]],
      [
        (v) => Number(v.replace(/\D/g, "")) / 100 > 10000 || v.startsWith("-"),
        ["950.00", "120.50", "640.25"],
        ["12,500.00", "12.500,00", "12500.00", "-450.00"],
      ],
      [(v) => Number(v) < 1.02, ["1.0845", "1.1123", "1.0567"], ["1.0145", "1.084512"]],
      [(v) => [0, 6].includes(new Date(v).getUTCDay()), ["2026-12-04", "2026-12-08", "2026-12-10"], ["2026-12-05"]],
      [(v) => v >= "17:00", ["09:00", "16:59", "12:30"], ["17:01"]],
    ];
    for (const [rule, seen, traps] of cases) {
      const ask1 = decide(rule);
      const train = seen.map((v, i) => ask1(`INV-1000${i}`, v));
      // A miss (the model answers), whether it holds (most) or pays at a rate of another precision (1.084512).
      for (const v of traps) expect(wrongOrMiss(train, ask1("INV-10009", v)).served, v).toBeNull();
      // The template serves: a value it confirmed, with a new invoice.
      expect(wrongOrMiss(train, ask1("INV-10009", seen[0])).served).toBe(`INV-10009: paid, ${seen[0]}.`);
    }
  });
});
