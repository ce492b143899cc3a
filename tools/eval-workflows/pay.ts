import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { between, FIRST, firstUser, LAST, lastToolResult, pick, say, toolCall, type Workflow } from "./types";

/**
 * A payments / treasury desk (the fifth template hunt): a vendor invoice paid by transfer, its fee charged to a
 * corporate card; tool results nest 2-3 deep. The model copies the reference, the invoice id, the payee's name
 * (tied to the email), email and phone, the IBAN, BIC, account number (leading zeros kept), amount, fee, FX rate,
 * value date, time received, MCC, postal code and the card's BIN and last 4. It decides on the IBAN's country
 * (`IR…` refused), the BIC's country letters (chars 5-6), the currency (`RUB` held), the amount (over 10,000.00,
 * written `12,500.00` or `12.500,00`: review; negative: a chargeback), the fee tier (over 3%), the FX rate (below
 * the pair's floor), the value date (a weekend), the 17:00 UTC cut-off, the phone's calling code (sanctioned
 * countries), the postal region (Hawaii, Alaska, Northern Ireland held), the MCC (`6011` cash, `7995` gambling
 * refused) and the BIN's brand (Amex and Maestro refused).
 */
export interface PayCase {
  ref: string;
  invoice: string;
  first: string;
  last: string;
  email: string;
  phone: string;
  iban: string;
  bic: string;
  account: string;
  currency: string;
  /** The amount in cents (negative: a chargeback). */
  cents: number;
  fee: string;
  rate: string;
  valueDate: string;
  sentAt: string;
  mcc: string;
  postal: string;
  bin: string;
  last4: string;
  trx: string;
}

const LIMIT_CENTS = 1_000_000;
const SANCTIONED_CALLING = ["+98", "+53", "+7"];
const REFUSED_MCC = ["6011", "7995"];
const ALLOWED_COUNTRIES = ["DE", "FR", "NL", "GB"];
/** The lowest rate paid per pair (EUR into the currency). */
const FLOOR: Record<string, number> = { USD: 1.02, GBP: 0.8 };

const TOOLS = [
  { type: "function", function: { name: "get_invoice", parameters: { type: "object", properties: { invoice_id: { type: "string" } } } } },
  { type: "function", function: { name: "get_fx_quote", parameters: { type: "object", properties: { pair: { type: "string" } } } } },
  ...["submit_payment", "issue_credit_note"].map((name) => ({ type: "function", function: { name, parameters: { type: "object" } } })),
];

/** An amount as the invoice writes it: under 1,000 plainly (`942.85`), else with thousands separators and decimals in the currency's locale (`12.500,00` in euros, `12,500.00` in others). */
function amountText(cents: number, currency: string): string {
  const [whole, dec] = (Math.abs(cents) / 100).toFixed(2).split(".");
  if (whole.length <= 3) return `${cents < 0 ? "-" : ""}${whole}.${dec}`;
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, currency === "EUR" ? "." : ",");
  return `${cents < 0 ? "-" : ""}${grouped}${currency === "EUR" ? "," : "."}${dec}`;
}

/** The cents an amount text stands for (either locale). */
function centsOf(text: string): number {
  const sign = text.startsWith("-") ? -1 : 1;
  return sign * Number(text.replace(/[^\d]/g, ""));
}

interface Invoice {
  invoice: {
    id: string;
    amount: { value: string; currency: string; fee: string };
    payee: { name: string; email: string; phone: string; bank: { iban: string; bic: string; account: string } };
    vendor: { mcc: string; address: { postal_code: string } };
  };
  card: { bin: string; last4: string };
}

const REQUEST = /^Payment (\S+): please pay invoice (\S+), value date (\S+) \(sent (\S+)\)\.$/;

/** A weekday of an ISO date (0 Sunday). */
const weekday = (date: string) => new Date(`${date}T00:00:00Z`).getUTCDay();
/** The next business day after an ISO date. */
function nextBusinessDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  do d.setUTCDate(d.getUTCDate() + 1);
  while (d.getUTCDay() === 0 || d.getUTCDay() === 6);
  return d.toISOString().slice(0, 10);
}

/** Whether a vendor's postal code is in a region the desk holds: Hawaii (967-968), Alaska (995-999), Northern Ireland (`BT`). */
function heldRegion(postal: string): boolean {
  if (/^BT\d/.test(postal)) return true;
  const zip = /^(\d{3})\d{2}(?:-\d{4})?$/.exec(postal);
  return zip !== null && ["967", "968", "995", "996", "997", "998", "999"].includes(zip[1]);
}

/** The card's brand by its BIN: Visa `4`, Mastercard `51`-`55`, Amex `34`/`37`, Maestro `50`/`56`-`58`/`6`. */
function brandOf(bin: string): "visa" | "mastercard" | "amex" | "maestro" {
  if (bin.startsWith("4")) return "visa";
  if (/^5[1-5]/.test(bin)) return "mastercard";
  if (/^3[47]/.test(bin)) return "amex";
  return "maestro";
}

function script(body: ChatBody): ScriptedMessage {
  const [, ref = "", invoiceId = "", valueDate = "", sentAt = ""] = REQUEST.exec(firstUser(body)) ?? [];
  const tool = lastToolResult(body);
  if (!tool) return toolCall("get_invoice", { invoice_id: invoiceId });
  const got = body.messages.find((m) => m.role === "tool" && String(m.content).includes('"payee"'));
  const { invoice: inv, card } = JSON.parse(String(got?.content ?? "{}")) as Invoice;
  const { payee, vendor, amount } = inv;
  const cents = centsOf(amount.value);
  const masked = `${card.bin}******${card.last4}`;
  if (tool.name === "get_invoice") {
    if (amount.currency === "RUB") return say(`${ref}: invoice ${invoiceId} is in RUB; payments in roubles are held for compliance.`);
    if (!ALLOWED_COUNTRIES.includes(payee.bank.iban.slice(0, 2)))
      return say(`${ref}: the IBAN ${payee.bank.iban} is in a country we do not pay; invoice ${invoiceId} refused.`);
    if (payee.bank.bic.slice(4, 6) !== payee.bank.iban.slice(0, 2))
      return say(`${ref}: the BIC ${payee.bank.bic} is not in the IBAN's country; invoice ${invoiceId} refused.`);
    if (SANCTIONED_CALLING.some((c) => payee.phone.startsWith(`${c} `)))
      return say(`${ref}: ${payee.name}'s phone ${payee.phone} is in a sanctioned country; invoice ${invoiceId} refused.`);
    if (REFUSED_MCC.includes(vendor.mcc)) return say(`${ref}: merchant category ${vendor.mcc} is not payable from the treasury account.`);
    const brand = brandOf(card.bin);
    if (brand === "amex" || brand === "maestro") return say(`${ref}: the fee card ${masked} is ${brand}, which we do not accept.`);
    if (heldRegion(vendor.address.postal_code))
      return say(`${ref}: the vendor at ${vendor.address.postal_code} is in a region held for tax review; invoice ${invoiceId} waits.`);
    if (cents < 0)
      return toolCall("issue_credit_note", { invoice_id: invoiceId, amount: amount.value, currency: amount.currency, email: payee.email, received_at: sentAt });
    if (cents > LIMIT_CENTS) return say(`${ref}: ${amount.value} ${amount.currency} is over the 10,000.00 limit; sent to review.`);
    if (Number.parseFloat(amount.fee) > 3) return say(`${ref}: the ${amount.fee} fee tier needs approval from treasury.`);
    if (weekday(valueDate) === 0 || weekday(valueDate) === 6) return say(`${ref}: ${valueDate} is not a business day; held.`);
    const sentUtc = new Date(sentAt);
    const late = sentUtc.toISOString().slice(0, 10) === valueDate && sentUtc.getUTCHours() >= 17;
    if (late) return say(`${ref}: sent after the 17:00 UTC cut-off; the value date moves to ${nextBusinessDay(valueDate)}.`);
    if (amount.currency !== "EUR") return toolCall("get_fx_quote", { pair: `EUR${amount.currency}` });
    return submit(ref, inv, card.last4, valueDate, sentAt, null);
  }
  if (tool.name === "get_fx_quote") {
    const rate = (tool.result.quote as { rate: string }).rate;
    if (Number(rate) < FLOOR[amount.currency]) return say(`${ref}: the quote ${rate} is below our floor for EUR${amount.currency}; held.`);
    return submit(ref, inv, card.last4, valueDate, sentAt, rate);
  }
  if (tool.name === "issue_credit_note") {
    const note = (tool.result.credit as { id: string }).id;
    return say(
      `${ref}: chargeback of ${amount.value} ${amount.currency} on ${invoiceId} booked as credit note ${note}; ${payee.name} <${payee.email}> notified.`,
    );
  }
  const payment = tool.result.payment as { id: string; settlement: { value_date: string } };
  return say(
    `${ref} paid: ${amount.value} ${amount.currency} to ${payee.name} <${payee.email}>, ${payee.phone}, IBAN ${payee.bank.iban}, account ${payee.bank.account}; invoice ${invoiceId}, MCC ${vendor.mcc}, ${vendor.address.postal_code}; fee card ${masked}; ${payment.id} settles ${payment.settlement.value_date}.`,
  );
}

function submit(ref: string, inv: Invoice["invoice"], last4: string, valueDate: string, sentAt: string, rate: string | null): ScriptedMessage {
  return toolCall("submit_payment", {
    reference: ref,
    invoice_id: inv.id,
    iban: inv.payee.bank.iban,
    bic: inv.payee.bank.bic,
    account: inv.payee.bank.account,
    amount: inv.amount.value,
    currency: inv.amount.currency,
    fee: inv.amount.fee,
    value_date: valueDate,
    received_at: sentAt,
    card_last4: last4,
    ...(rate === null ? {} : { fx_rate: Number(rate) }),
  });
}

const digits = (rng: () => number, n: number) => Array.from({ length: n }, () => String(between(rng, 0, 9))).join("");

/** Where the beneficiary's bank is: the IBAN's country, its banks' BICs, the phone's format and its currency. */
const COUNTRIES: Record<string, { bics: string[]; phone: (rng: () => number) => string; ibanDigits: number }> = {
  DE: { bics: ["DEUTDEFF500", "COBADEFF370"], phone: (rng) => `+49 30 ${digits(rng, 4)} ${digits(rng, 4)}`, ibanDigits: 20 },
  FR: { bics: ["BNPAFRPP123", "SOGEFRPP456"], phone: (rng) => `+33 1 ${digits(rng, 4)} ${digits(rng, 4)}`, ibanDigits: 25 },
  NL: { bics: ["INGBNL2A", "ABNANL2A"], phone: (rng) => `+31 20 ${digits(rng, 4)} ${digits(rng, 4)}`, ibanDigits: 16 },
  GB: { bics: ["BARCGB22", "NWBKGB2L"], phone: (rng) => `+44 20 ${digits(rng, 4)} ${digits(rng, 4)}`, ibanDigits: 20 },
};

/** Vendors' postal codes: US ZIPs and ZIP+4s in the contiguous states, UK postcodes; held regions for the traps. */
const ZIPS = ["02139", "10001", "30301", "60601", "75201", "94105", "98101"];
const HELD_ZIPS = ["96813", "99501", "96720"];
const POSTCODES = ["SW1A 1AA", "EC1A 1BB", "WC2N 5DU", "M1 1AE"];
const HELD_POSTCODES = ["BT1 1AA", "BT7 1NN"];

/** A payments / treasury desk (`wf-pay`). */
export const payDesk: Workflow<PayCase> = {
  name: "pay-desk",
  system:
    "You are the treasury desk. Look the invoice up. We pay IBANs in DE, FR, NL and GB only, through a BIC of the same country; roubles are held; phones in sanctioned countries refused; merchant categories 6011 (cash) and 7995 (gambling) refused; fee cards must be Visa or Mastercard; vendors in Hawaii, Alaska and Northern Ireland are held for tax review; negative amounts are chargebacks (credit note); over 10,000.00 goes to review; fee tiers over 3% need approval; value dates must be business days; requests sent after 17:00 UTC on the value date roll to the next business day; quote a rate for USD and GBP and hold it below the floor.",
  tools: TOOLS,
  kinds: [
    ["eur", 3],
    ["usd", 1],
    ["gbp", 1],
    ["chargeback", 1],
  ],
  traps: ["iban-ir", "bic-ir", "rub", "big", "fee", "bad-rate", "weekend", "late", "phone-sanctioned", "region", "mcc-refused", "bin-refused"],
  makeCase(rng, kind) {
    const first = pick(rng, FIRST);
    const last = pick(rng, LAST);
    const country = kind === "gbp" ? "GB" : pick(rng, ["DE", "FR", "NL"]);
    const home = COUNTRIES[country];
    const currency = kind === "rub" ? "RUB" : kind === "usd" || kind === "bad-rate" ? "USD" : kind === "gbp" ? "GBP" : "EUR";
    const ibanCountry = kind === "iban-ir" ? "IR" : country;
    const bic = kind === "bic-ir" ? pick(rng, ["MELIIRTH001", "BMJIIRTH123", "SEPBIR2T"]) : pick(rng, home.bics);
    // Ordinary amounts up to 9,999.99 (most under 1,000); the trap over the 10,000.00 limit.
    const cents =
      kind === "big"
        ? between(rng, 1_000_001, 5_000_000)
        : kind === "chargeback"
          ? -between(rng, 1000, 90000)
          : rng() < 0.7
            ? between(rng, 5000, 99999)
            : between(rng, 100000, 999999);
    const rate =
      currency === "GBP"
        ? `0.${between(rng, 82, 89)}${digits(rng, between(rng, 2, 4))}`
        : `1.${kind === "bad-rate" ? "01" : pick(rng, ["05", "07", "09", "11"])}${digits(rng, between(rng, 2, 4))}`;
    const weekdayDate = () => {
      for (;;) {
        const d = `2026-12-${String(between(rng, 1, 31)).padStart(2, "0")}`;
        if (weekday(d) !== 0 && weekday(d) !== 6) return d;
      }
    };
    const valueDate = kind === "weekend" ? pick(rng, ["2026-12-05", "2026-12-12", "2026-12-19", "2026-12-20"]) : weekdayDate();
    const hour = kind === "late" ? between(rng, 17, 19) : between(rng, 8, 16);
    const minute = kind === "late" ? pick(rng, ["01", "15", "30"]) : pick(rng, ["00", "20", "45", "59"]);
    const zone = pick(rng, ["Z", "Z", "+01:00", "-05:00"]);
    const localHour = hour + (zone === "Z" ? 0 : zone === "+01:00" ? 1 : -5);
    const phone = kind === "phone-sanctioned" ? `${pick(rng, SANCTIONED_CALLING)} ${between(rng, 2, 21)} ${digits(rng, 4)} ${digits(rng, 4)}` : home.phone(rng);
    const postal =
      kind === "region"
        ? pick(rng, [...HELD_ZIPS, ...HELD_ZIPS, ...HELD_POSTCODES, `${pick(rng, HELD_ZIPS)}-${digits(rng, 4)}`])
        : rng() < 0.6
          ? pick(rng, ZIPS)
          : rng() < 0.5
            ? `${pick(rng, ZIPS)}-${digits(rng, 4)}`
            : pick(rng, POSTCODES);
    return {
      ref: `PAY-${digits(rng, 8)}`,
      invoice: `INV-${between(rng, 10000, 99999)}`,
      first,
      last,
      email: `${first.toLowerCase()}.${last.toLowerCase()}${between(rng, 10, 99)}@example.com`,
      phone,
      iban: `${ibanCountry}${digits(rng, 2)}${digits(rng, home.ibanDigits)}`,
      bic,
      account: `00${digits(rng, 6)}`,
      currency,
      cents,
      fee: kind === "fee" ? pick(rng, ["3.5%", "4.25%", "3.15%"]) : pick(rng, ["0.75%", "1.25%", "1.95%", "2.45%"]),
      rate,
      valueDate,
      sentAt: `${valueDate}T${String(localHour).padStart(2, "0")}:${minute}:00${zone}`,
      mcc: kind === "mcc-refused" ? pick(rng, REFUSED_MCC) : pick(rng, ["5411", "5812", "7011", "4121", "5732"]),
      postal,
      bin:
        kind === "bin-refused" ? pick(rng, ["378282", "371449", "501018", "560221"]) : pick(rng, ["424242", "411111", "455673", "510510", "545454", "555555"]),
      last4: digits(rng, 4),
      trx: `TRX-${digits(rng, 10)}`,
    };
  },
  userMessage: (c) => `Payment ${c.ref}: please pay invoice ${c.invoice}, value date ${c.valueDate} (sent ${c.sentAt}).`,
  execTool(c, call) {
    if (call.name === "get_invoice")
      return {
        invoice: {
          id: c.invoice,
          amount: { value: amountText(c.cents, c.currency), currency: c.currency, fee: c.fee },
          payee: { name: `${c.first} ${c.last}`, email: c.email, phone: c.phone, bank: { iban: c.iban, bic: c.bic, account: c.account } },
          vendor: { mcc: c.mcc, address: { postal_code: c.postal } },
        },
        card: { bin: c.bin, last4: c.last4 },
      };
    if (call.name === "get_fx_quote") return { quote: { pair: call.args.pair, rate: c.rate } };
    if (call.name === "issue_credit_note") return { credit: { id: `CN-${c.invoice.slice(4)}` } };
    return { payment: { id: c.trx, status: "queued", settlement: { value_date: c.valueDate } } };
  },
  script,
  rangeOf: (c) => {
    const sent = new Date(c.sentAt);
    const cls = [
      c.currency,
      ALLOWED_COUNTRIES.includes(c.iban.slice(0, 2)),
      c.bic.slice(4, 6) === c.iban.slice(0, 2),
      SANCTIONED_CALLING.some((p) => c.phone.startsWith(`${p} `)),
      REFUSED_MCC.includes(c.mcc),
      brandOf(c.bin),
      heldRegion(c.postal),
      c.cents < 0,
      c.cents > LIMIT_CENTS,
      Number.parseFloat(c.fee) > 3,
      weekday(c.valueDate) === 0 || weekday(c.valueDate) === 6,
      sent.getUTCHours() >= 17,
      c.currency in FLOOR && Number(c.rate) < FLOOR[c.currency],
    ].join("|");
    return { cls, ranged: [c.cents, Number(c.rate), Number(c.valueDate.slice(8, 10)), sent.getUTCHours() * 60 + sent.getUTCMinutes()] };
  },
  bindingsOf: (c) => ({ reference: c.ref, invoice_id: c.invoice, name: `${c.first} ${c.last}`, email: c.email, last4: c.last4, trx: c.trx }),
};
