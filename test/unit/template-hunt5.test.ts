import { describe, expect, it } from "vitest";
import { ask, reasonFor, wrongOrMiss } from "./templates.serve.support";

/**
 * The fifth template hunt (a payments / treasury desk, tools/eval-workflows/pay.ts): each workflow is recorded
 * on some values and replayed on others; the scripted model decides, and a template must render exactly its
 * answer or miss. Every case here was served the wrong answer before its rule.
 */
describe("digits a JSON string holds whole are a code, never ranged", () => {
  /** A card payment at a merchant (the tool's JSON as text): categories 6011 (cash) and 7995 (gambling) refused. */
  const pay = (invoice: string, mcc: string) =>
    ask(
      "Merchant categories 6011 and 7995 are refused.",
      `Pay ${invoice}: {"merchant":{"mcc":"${mcc}"}}`,
      ["6011", "7995"].includes(mcc) ? `${invoice}: category ${mcc} refused.` : `${invoice}: paid at MCC ${mcc}.`,
    );
  const train = [pay("INV-10001", "5411"), pay("INV-10002", "7011"), pay("INV-10003", "5812")];

  it("Should not pay at MCC 6011 (cash) after 5411, 7011 and 5812 (it lay inside their range)", () => {
    expect(wrongOrMiss(train, pay("INV-10004", "6011"))).toEqual({ served: null, model: "INV-10004: category 6011 refused." });
    expect(reasonFor(train, pay("INV-10004", "6011"))).toContain("a code");
  });

  it("Should serve a confirmed category with new data", () => {
    expect(wrongOrMiss(train, pay("INV-10009", "7011")).served).toBe("INV-10009: paid at MCC 7011.");
  });

  it("Should not pay a vendor at the Hawaiian ZIP 96813 after mainland ZIPs on both sides (a region decides)", () => {
    const vendor = (invoice: string, zip: string) =>
      ask(
        "Vendors in Hawaii are held.",
        `Pay ${invoice}: {"vendor":{"address":{"postal_code":"${zip}"}}}`,
        zip.startsWith("96") ? `${invoice}: held for tax review.` : `${invoice}: paid to the vendor at ${zip}.`,
      );
    const zips = [vendor("INV-10001", "94105"), vendor("INV-10002", "98101"), vendor("INV-10003", "60601")];
    expect(wrongOrMiss(zips, vendor("INV-10004", "96813"))).toEqual({ served: null, model: "INV-10004: held for tax review." });
  });

  it("Should not accept a Maestro BIN (501018) between a Visa one and Mastercard ones (the first digits decide the brand)", () => {
    const card = (invoice: string, bin: string) =>
      ask(
        "Fee cards must be Visa or Mastercard.",
        `Pay ${invoice}: {"card":{"bin":"${bin}"}}`,
        /^(4|5[1-5])/.test(bin) ? `${invoice}: fee charged to ${bin}.` : `${invoice}: card ${bin} not accepted.`,
      );
    const bins = [card("INV-10001", "424242"), card("INV-10002", "545454"), card("INV-10003", "510510")];
    expect(wrongOrMiss(bins, card("INV-10004", "501018"))).toEqual({ served: null, model: "INV-10004: card 501018 not accepted." });
  });
});

describe("digits after a `+` are a calling code, never ranged", () => {
  /** A beneficiary's phone: sanctioned countries (Cuba, +53) refused. */
  const check = (invoice: string, phone: string) =>
    ask(
      "Beneficiaries with phones in sanctioned countries are refused.",
      `${invoice}: beneficiary phone ${phone}`,
      phone.startsWith("+53 ") ? `${invoice}: refused.` : `${invoice}: cleared, phone ${phone}.`,
    );
  const train = [check("INV-10001", "+44 20 7946 0958"), check("INV-10002", "+61 2 9876 5432"), check("INV-10003", "+49 30 9018 2044")];

  it("Should not clear +53 (Cuba) after +44, +61 and +49 (it lay inside their range)", () => {
    expect(wrongOrMiss(train, check("INV-10004", "+53 7 8765 4321"))).toEqual({ served: null, model: "INV-10004: refused." });
  });

  it("Should clear a new phone of a confirmed country", () => {
    expect(wrongOrMiss(train, check("INV-10004", "+49 30 9500 5000")).served).toBe("INV-10004: cleared, phone +49 30 9500 5000.");
  });
});

describe("digits after an upper-case label, padded with zeros or before a mask are codes too", () => {
  const brand = (bin: string) => /^(4|5[1-5])/.test(bin);

  it("Should not pay at `MCC 6011` written in text after MCC 5411, 7011 and 5812", () => {
    const pay = (invoice: string, mcc: string) =>
      ask("Categories 6011 and 7995 are refused.", `Pay ${invoice} at MCC ${mcc}`, mcc === "6011" ? `${invoice}: refused.` : `${invoice}: paid, MCC ${mcc}.`);
    const train = [pay("INV-10001", "5411"), pay("INV-10002", "7011"), pay("INV-10003", "5812")];
    expect(wrongOrMiss(train, pay("INV-10004", "6011"))).toEqual({ served: null, model: "INV-10004: refused." });
    expect(wrongOrMiss(train, pay("INV-10004", "5411")).served).toBe("INV-10004: paid, MCC 5411.");
  });

  it("Should not charge `BIN 501018` (Maestro) in text after Visa and Mastercard BINs", () => {
    const charge = (invoice: string, bin: string) =>
      ask("Visa and Mastercard only.", `Fee for ${invoice}: BIN ${bin}`, brand(bin) ? `${invoice}: charged BIN ${bin}.` : `${invoice}: card refused.`);
    const train = [charge("INV-10001", "424242"), charge("INV-10002", "545454"), charge("INV-10003", "510510")];
    expect(wrongOrMiss(train, charge("INV-10004", "501018"))).toEqual({ served: null, model: "INV-10004: card refused." });
  });

  it("Should not charge a masked card 501018******5555 (the BIN before the mask), and serve a confirmed BIN with new last 4", () => {
    const charge = (invoice: string, pan: string) =>
      ask("Visa and Mastercard only.", `Fee for ${invoice}: card ${pan}`, brand(pan) ? `${invoice}: charged ${pan}.` : `${invoice}: card refused.`);
    const train = [charge("INV-10001", "424242******0042"), charge("INV-10002", "545454******1234"), charge("INV-10003", "510510******9876")];
    expect(wrongOrMiss(train, charge("INV-10004", "501018******5555"))).toEqual({ served: null, model: "INV-10004: card refused." });
    expect(wrongOrMiss(train, charge("INV-10004", "424242******7777")).served).toBe("INV-10004: charged 424242******7777.");
  });

  it("Should not clear a phone dialled 0053 (Cuba) after 0044, 0061 and 0049 (a padded number is a code of a fixed width)", () => {
    const check = (invoice: string, phone: string) =>
      ask(
        "Sanctioned countries are refused.",
        `${invoice}: phone ${phone}`,
        phone.startsWith("0053") ? `${invoice}: refused.` : `${invoice}: cleared ${phone}.`,
      );
    const train = [check("INV-10001", "0044 20 7946 0958"), check("INV-10002", "0061 2 9876 5432"), check("INV-10003", "0049 30 9018 2044")];
    expect(wrongOrMiss(train, check("INV-10004", "0053 7 8765 4321"))).toEqual({ served: null, model: "INV-10004: refused." });
  });
});
