import { describe, expect, it } from "vitest";
import { ask, reasonFor, wrongOrMiss } from "./templates.serve.support";

/**
 * The third template hunt (kinds of values the evaluation never shows): each workflow is recorded on some
 * values and replayed on others; the scripted model decides, and a template must render exactly its
 * answer or miss. Every case here was served the wrong answer before its rule.
 */
/** A number written with the digits of another script (Arabic-Indic U+0660.., fullwidth U+FF10..). */
const digits = (n: number, zero: number) => [...String(n)].map((d) => String.fromCharCode(zero + Number(d))).join("");

describe("numbers no plain decimal reading orders are never slots", () => {
  const refund = (amount: string, n: number, id: string) =>
    ask(
      "Refunds up to 50000 are approved.",
      `Refund ${amount} for ${id}`,
      n <= 50000 ? `Refunded ${amount} for ${id}.` : `Refund of ${amount} for ${id} escalated.`,
    );

  it.each([
    ["Arabic-Indic", 0x660],
    ["fullwidth", 0xff10],
  ])("Should not approve 99000 written in %s digits from approvals of 3000, 12000 and 25000 (an identifier: no range)", (_, zero) => {
    const train = [3000, 12000, 25000].map((n, i) => refund(digits(n, zero), n, `R-100${i}`));
    expect(wrongOrMiss(train, refund(digits(99000, zero), 99000, "R-1009")).served).toBeNull();
  });

  it("Should not approve a budget of 3e5 from 1e3, 5e3 and 2e4 (an exponent ranged by its mantissa as a level)", () => {
    const budget = (v: string, id: string) =>
      ask("Budgets up to 1e5 are approved.", `Budget ${v} for ${id}`, Number(v) <= 1e5 ? `Approved ${v} for ${id}.` : `${v} for ${id} needs review.`);
    expect(wrongOrMiss([budget("1e3", "B-1001"), budget("5e3", "B-1002"), budget("2e4", "B-1003")], budget("3e5", "B-1004")).served).toBeNull();
  });

  it("Should not send 2.75 EUR for approval from transfers of 1.250, 3.750 and 2.500 (thousands, in the tool's locale)", () => {
    const transfer = (v: string, id: string) => {
      const amount = v.split(".")[1]?.length === 3 ? Number(v.replace(".", "")) : Number(v);
      return ask(
        "Transfers over 1.000 EUR need approval.",
        `Transfer ${v} EUR for ${id}`,
        amount > 1000 ? `Transfer of ${v} EUR for ${id} needs approval.` : `Transferred ${v} EUR for ${id}.`,
      );
    };
    const train = [transfer("1.250", "A-1001"), transfer("3.750", "A-1002"), transfer("2.500", "A-1003")];
    expect(wrongOrMiss(train, transfer("2.75", "A-1004"))).toEqual({ served: null, model: "Transferred 2.75 EUR for A-1004." });
  });

  it("Should not book a session of PT600M from sessions of PT120M, PT150M and PT180M (at most 3 hours)", () => {
    const session = (v: string, id: string) =>
      ask(
        "Sessions last at most 3 hours.",
        `Book session ${id} for ${v}`,
        Number(v.slice(2, -1)) <= 180 ? `Booked ${id} for ${v}.` : `${v} is too long for ${id}.`,
      );
    const train = [session("PT120M", "S-1001"), session("PT150M", "S-1002"), session("PT180M", "S-1003")];
    expect(wrongOrMiss(train, session("PT600M", "S-1004")).served).toBeNull();
  });

  it("Should not deploy on version 32.2 from 32.13, 32.25 and 32.17 (a decimal between them, a version below them)", () => {
    const deploy = (v: string, id: string) =>
      ask(
        "Versions from 32.10 are supported.",
        `Ticket ${id}: deploy on ${v}`,
        Number(v.split(".")[1]) >= 10 ? `Deploying ${id} on ${v}.` : `${v} is too old for ${id}.`,
      );
    const train = [deploy("32.13", "T-1001"), deploy("32.25", "T-1002"), deploy("32.17", "T-1003")];
    expect(wrongOrMiss(train, deploy("32.2", "T-1004")).served).toBeNull();
    expect(wrongOrMiss(train, deploy("32.21", "T-1004")).served).toBe("Deploying T-1004 on 32.21.");
  });
});

describe("identifiers: the lengths of their digits", () => {
  it("Should not open ACC-1234567 from ACC-12345678, ACC-23456789 and ACC-34567890 (accounts have 8 digits)", () => {
    const open = (v: string) =>
      ask("Account numbers have 8 digits.", `Open account ACC-${v}`, v.length === 8 ? `Opened ACC-${v}.` : `ACC-${v} is not a valid account number.`);
    const train = [open("12345678"), open("23456789"), open("34567890")];
    expect(wrongOrMiss(train, open("1234567")).served).toBeNull();
    expect(wrongOrMiss(train, open("45678901")).served).toBe("Opened ACC-45678901.");
  });

  it("Should not upgrade to Tier100 from Tier1, Tier3 and Tier2 (three digits are no level, yet no id either)", () => {
    const upgrade = (v: number, id: string) =>
      ask(
        "Upgrades are approved up to Tier3.",
        `Upgrade order ${id} to Tier${v}`,
        v <= 3 ? `Upgraded ${id} to Tier${v}.` : `Tier${v} needs a manager: ${id} not upgraded.`,
      );
    expect(wrongOrMiss([upgrade(1, "A-1001"), upgrade(3, "A-1002"), upgrade(2, "A-1003")], upgrade(100, "A-1004")).served).toBeNull();
  });
});

describe("numbers padded with zeros, and levels of several numbers", () => {
  it("Should not ship to the zip 9410 from zips 02139, 10001 and 94105 (padded: a code of 5 digits)", () => {
    const ship = (zip: string, id: string) =>
      ask(
        "We ship to US zip codes (5 digits).",
        `Ship ${id} to zip ${zip}`,
        /^\d{5}$/.test(zip) ? `Shipping ${id} to ${zip}.` : `${zip} is not a valid zip code (${id}).`,
      );
    const train = [ship("02139", "A-1001"), ship("10001", "A-1002"), ship("94105", "A-1003")];
    expect(wrongOrMiss(train, ship("9410", "A-1004")).served).toBeNull();
    // After the word `zip` the digits are a code (codes.ts CODE_WORDS, the reach work): only a confirmed zip is
    // served. Before, `60601` was served as a number between 02139 and 94105, as `96813` (Hawaii) would have been.
    expect(wrongOrMiss(train, ship("60601", "A-1004")).served).toBeNull();
    expect(wrongOrMiss(train, ship("10001", "A-1004")).served).toBe("Shipping A-1004 to 10001.");
  });

  it("Should not accept a box of 5x20 from boxes of 3x4, 10x12 and 8x9 (between them in order, yet 20 long)", () => {
    const box = (v: string, id: string) => {
      const [a, b] = v.split("x").map(Number);
      return ask("Parcels up to 15 cm a side.", `Box ${id} is ${v}`, Math.max(a, b) <= 15 ? `Box ${id} (${v}) accepted.` : `Box ${id} (${v}) is too large.`);
    };
    const train = [box("3x4", "A-1001"), box("10x12", "A-1002"), box("8x9", "A-1003")];
    expect(wrongOrMiss(train, box("5x20", "A-1004")).served).toBeNull();
    expect(wrongOrMiss(train, box("5x6", "A-1004")).served).toBe("Box A-1004 (5x6) accepted.");
  });
});

describe("a period: a year beside a small number", () => {
  it.each([
    ["2024-Q4", ["2024-Q1", "2024-Q2", "2024-Q3"]],
    ["2024-W52", ["2024-W10", "2024-W20", "2024-W30"]],
  ])("Should not file %s from filings for %s (an id of four digits, served outside those seen)", (closed, open) => {
    const file = (v: string, id: string) =>
      ask(`${closed} is closed for filing.`, `File report ${id} for ${v}`, v === closed ? `${v} is closed (${id}).` : `Filed ${id} for ${v}.`);
    const train = open.map((v, i) => file(v, `R-100${i}`));
    expect(wrongOrMiss(train, file(closed, "R-1009")).served).toBeNull();
    expect(wrongOrMiss(train, file(open[1], "R-1009")).served).toBe(`Filed R-1009 for ${open[1]}.`);
  });
});

describe("times of day", () => {
  it("Should not book a pickup at 18:30 on a day between those confirmed at 10:00, 16:00 and 12:00 (pickups end at 17:00)", () => {
    const pickup = (v: string, id: string) =>
      ask("Pickups end at 17:00.", `Pickup ${id} at ${v}`, v.slice(11, 16) <= "17:00" ? `Pickup ${id} booked at ${v}.` : `No pickups after 17:00 (${id}).`);
    const train = [pickup("2024-03-05T10:00:00Z", "P-1001"), pickup("2024-03-08T16:00:00Z", "P-1002"), pickup("2024-03-06T12:00:00Z", "P-1003")];
    expect(wrongOrMiss(train, pickup("2024-03-06T18:30:00Z", "P-1004")).served).toBeNull();
    expect(wrongOrMiss(train, pickup("2024-03-07T11:15:00Z", "P-1004")).served).toBe("Pickup P-1004 booked at 2024-03-07T11:15:00Z.");
  });

  it("Should not deliver on Saturday 2024-03-09 from deliveries on a Monday, a Friday and a Wednesday around it (no weekends)", () => {
    const deliver = (d: string, id: string) => {
      const day = new Date(`${d}T00:00:00Z`).getUTCDay();
      return ask(
        "No deliveries on weekends.",
        `Deliver ${id} on ${d}`,
        day === 0 || day === 6 ? `We do not deliver on weekends (${id}).` : `Delivery of ${id} on ${d} booked.`,
      );
    };
    const train = [deliver("2024-03-04", "A-1001"), deliver("2024-03-08", "A-1002"), deliver("2024-03-13", "A-1003")];
    expect(wrongOrMiss(train, deliver("2024-03-09", "A-1004")).served).toBeNull();
    expect(wrongOrMiss(train, deliver("2024-03-12", "A-1004")).served).toBe("Delivery of A-1004 on 2024-03-12 booked.");
  });

  it("Should not book 11:00 PM from bookings at 1:30, 4:00 and 12:30 PM (an hour and its PM are one value: 23:00)", () => {
    const book = (v: string, id: string) => {
      const [h, m] = v.split(":").map(Number);
      return ask(
        "Appointments until 5 PM.",
        `Book ${id} at ${v} PM`,
        ((h % 12) + 12) * 60 + m <= 17 * 60 ? `Booked ${id} at ${v} PM.` : `${v} PM is after hours for ${id}.`,
      );
    };
    const train = [book("1:30", "V-1001"), book("4:00", "V-1002"), book("12:30", "V-1003")];
    expect(wrongOrMiss(train, book("11:00", "V-1004")).served).toBeNull();
  });
});

describe("kinds that held (each checked on a decision the model makes on it)", () => {
  it("Should miss a tier glued to an id in a caseless script, a negative amount, a false flag, a status code above those seen", () => {
    const card = (tier: string, n: string) =>
      ask("黑卡会员不享受免运费。", `订单 ${tier}会员${n}`, tier === "黑卡" ? `${tier}会员${n} 需要支付运费。` : `${tier}会员${n} 免运费。`);
    expect(wrongOrMiss([card("金卡", "12345"), card("银卡", "23456"), card("铜卡", "34567")], card("黑卡", "55555")).served).toBeNull();
    const balance = (v: string, id: string) =>
      ask("Refund credits only.", `Balance of ${id}: {"amount": ${v}}`, Number(v) < 0 ? `Charged ${id} ${v}.` : `Refunded ${id} ${v}.`);
    expect(wrongOrMiss([balance("50", "O-1001"), balance("70", "O-1002"), balance("30", "O-1003")], balance("-40", "O-1004")).served).toBeNull();
    const active = (b: string, id: string) =>
      ask("Refund active accounts.", `Account ${id}: {"active": ${b}}`, b === "true" ? `Refunded ${id}.` : `Account ${id} is inactive.`);
    expect(wrongOrMiss([active("true", "A-1001"), active("true", "A-1002"), active("true", "A-1003")], active("false", "A-1004")).served).toBeNull();
    const job = (code: string, id: string) =>
      ask("Retry 5xx.", `Job ${id}: {"status": ${code}}`, code.startsWith("5") ? `Retrying ${id} after ${code}.` : `Job ${id} done with ${code}.`);
    const jobs = [job("200", "J-1001"), job("204", "J-1002"), job("201", "J-1003")];
    expect(wrongOrMiss(jobs, job("503", "J-1004")).served).toBeNull();
    expect(wrongOrMiss(jobs, job("203", "J-1004")).served).toBe("Job J-1004 done with 203.");
  });

  it("Should miss a decimal comma, another host in a link, a hazardous item in a cart, a username too short", () => {
    const parcel = (v: string, id: string) =>
      ask(
        "Parcels over 20 kg ship freight.",
        `Ship ${id}: ${v} kg`,
        Number(v.replace(",", ".")) <= 20 ? `Shipped ${id} (${v} kg).` : `${id} ships freight (${v} kg).`,
      );
    expect(wrongOrMiss([parcel("5,5", "O-1001"), parcel("12,5", "O-1002"), parcel("8,5", "O-1003")], parcel("25,5", "O-1004")).served).toBeNull();
    const link = (u: string, id: string) =>
      ask(
        "Only links on shop.example.com.",
        `Ticket ${id}: open ${u}`,
        u.startsWith("https://shop.example.com/") ? `Opening ${u} for ${id}.` : `Link ${u} refused for ${id}.`,
      );
    const links = ["1001", "2002", "3003"].map((n) => link(`https://shop.example.com/o/${n}`, `T-${n}`));
    expect(wrongOrMiss(links, link("https://shop.evil.com/o/4004", "T-4004")).served).toBeNull();
    const cart = (items: string[], id: string) =>
      ask(
        "Carts with hazardous (HZ-) items need review.",
        `Cart ${id}: ${items.join(", ")}`,
        items.some((i) => i.startsWith("HZ")) ? `Cart ${id} needs review.` : `Cart ${id} with ${items.join(", ")} checked out.`,
      );
    const carts = [cart(["SK-1001", "SK-2002"], "C-1001"), cart(["SK-3003", "SK-4004"], "C-1002"), cart(["SK-5005", "SK-6006"], "C-1003")];
    expect(wrongOrMiss(carts, cart(["SK-7007", "HZ-8008"], "C-1004")).served).toBeNull();
    const user = (u: string) => ask("Usernames need 5+ letters.", `Register user ${u}42`, u.length >= 5 ? `Registered ${u}42.` : `${u}42 is too short.`);
    expect(wrongOrMiss([user("alice"), user("bobby"), user("carol")], user("al")).served).toBeNull();
  });
});

describe("the reasons a miss gives for the new rules (docs/templates.md)", () => {
  it("Should name the digits' lengths, the decimal places and the time of day, never a confirmed value", () => {
    const open = (v: string) => ask("Accounts.", `Open account ACC-${v}`, `Opened ACC-${v}.`);
    expect(reasonFor([open("12345678"), open("23456789"), open("34567890")], open("1234567"))).toBe(
      "slot 0 (identifier `ACC-1234567`): digits of lengths 7 never confirmed (every confirmed value had 8)",
    );
    const deploy = (v: string) => ask("Deploys.", `Deploy on ${v}`, `Deploying on ${v}.`);
    expect(reasonFor([deploy("32.13"), deploy("32.25"), deploy("32.17")], deploy("32.2"))).toBe("slot 0 (number `32.2`): 1 decimal place never confirmed");
    const pickup = (v: string) => ask("Pickups.", `Pickup at ${v}`, `Pickup booked at ${v}.`);
    expect(reasonFor([pickup("2024-03-05T10:00:00Z"), pickup("2024-03-08T16:00:00Z"), pickup("2024-03-06T12:00:00Z")], pickup("2024-03-06T18:30:00Z"))).toBe(
      "slot 0 (date `2024-03-06T18:30:00Z`): its time of day is outside those confirmed (a decision on the hour is not ranged by the dates)",
    );
    expect(reasonFor([pickup("2024-03-04"), pickup("2024-03-08"), pickup("2024-03-13")], pickup("2024-03-09"))).toBe(
      "slot 0 (date `2024-03-09`): a day of the weekend was never confirmed",
    );
    // With no word that names a code before it, `9410` is a number, refused for its width; after `zip`, a code.
    const ship = (zip: string) => ask("Zips.", `Ship to ${zip}`, `Shipping to ${zip}.`);
    expect(reasonFor([ship("02139"), ship("10001"), ship("94105")], ship("9410"))).toBe(
      "slot 0 (number `9410`): 4 digits never confirmed where numbers are padded with zeros",
    );
    const shipZip = (zip: string) => ask("Zips.", `Ship to zip ${zip}`, `Shipping to ${zip}.`);
    expect(reasonFor([shipZip("02139"), shipZip("10001"), shipZip("94105")], shipZip("9410"))).toContain("a code, never confirmed");
    const box = (v: string) => ask("Boxes.", `Box ${v}`, `Box ${v} accepted.`);
    expect(reasonFor([box("3x4"), box("10x12"), box("8x9")], box("5x20"))).toBe(
      "slot 0 (identifier `5x20`): level 5.20: its number 2 lies outside those confirmed for `x`",
    );
  });
});
