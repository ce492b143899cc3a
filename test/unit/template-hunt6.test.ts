import { describe, expect, it } from "vitest";
import { ask, reasonFor, wrongOrMiss } from "./templates.serve.support";

/**
 * The sixth template hunt (test/worker/templates-hunt6-fields.test.ts drives the fields of a chat request
 * through the Worker): a value copied byte for byte may still be one the model decides on, when its letters
 * are of a script no confirmed value had: a look-alike (`а`, Cyrillic, for `a`) is what phishing and fraud
 * are made of, and a model told so holds it. Every case here was served the wrong answer before its rule.
 */
const mixed = (v: string) => /\p{Script=Latin}/u.test(v) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(v);

/** A refund desk that holds a customer whose email or order id mixes alphabets (a look-alike). */
const refund = (order: string, email: string) =>
  ask(
    "Refund the order to the customer's email. An email or order id that mixes alphabets is fraud: hold it.",
    `Refund order ${order} to ${email}`,
    mixed(email)
      ? `Order ${order} is held: ${email} mixes alphabets.`
      : mixed(`${order} ${email}`)
        ? `Order ${order} is held: its id is not in the alphabet of ${email}.`
        : `Refunded order ${order} to ${email}.`,
  );
const train = [refund("A-1001", "ada@example.com"), refund("B-2002", "bob@example.com"), refund("C-3003", "cyd@example.com")];

describe("letters of a script no confirmed value had are never served", () => {
  it("Should serve a new Latin email and order id (the template learned at all)", () => {
    expect(wrongOrMiss(train, refund("D-4004", "zoë@example.com"))).toEqual({
      served: "Refunded order D-4004 to zoë@example.com.",
      model: "Refunded order D-4004 to zoë@example.com.",
    });
  });

  it("Should not refund to аda@example.com, whose first letter is Cyrillic (the shape and the domain were those confirmed)", () => {
    const request = refund("D-4004", "\u0430da@example.com");
    expect(wrongOrMiss(train, request)).toEqual({ served: null, model: "Order D-4004 is held: \u0430da@example.com mixes alphabets." });
    expect(reasonFor(train, request)).toContain("script Cyrillic+Latin never confirmed");
  });

  it("Should not refund order Е-4004, whose letter is Cyrillic (one letter of a confirmed length was data)", () => {
    const request = refund("\u0415-4004", "dan@example.com");
    expect(wrongOrMiss(train, request)).toEqual({ served: null, model: "Order \u0415-4004 is held: its id is not in the alphabet of dan@example.com." });
    expect(reasonFor(train, request)).toContain("script Cyrillic never confirmed");
  });
});

describe("a case function serves only values it maps letter for letter", () => {
  /** A ticket desk that writes the code in lower case (a slug): `A-17` -> `a-17`, as a model writes it (`İ-40` -> `i-40`). */
  const slug = (code: string, lowered = code.toLowerCase()) =>
    ask("Write the ticket's code as a slug.", `Open ticket ${code}`, `Opened ticket ${lowered} (slug).`);
  const train = [slug("A-17"), slug("C-22"), slug("E-31")];

  it("Should serve a new code it lower-cases letter for letter (the template learned the function at all)", () => {
    expect(wrongOrMiss(train, slug("G-40"))).toEqual({ served: "Opened ticket g-40 (slug).", model: "Opened ticket g-40 (slug)." });
  });

  it("Should not serve İ-40 lower-cased with a combining dot (`i\u0307-40`): JavaScript maps `İ` to two code points", () => {
    const request = slug("\u0130-40", "i-40");
    expect(wrongOrMiss(train, request)).toEqual({ served: null, model: "Opened ticket i-40 (slug)." });
    expect(reasonFor(train, request)).toContain("`lower` of it, which does not apply to this value");
  });
});
