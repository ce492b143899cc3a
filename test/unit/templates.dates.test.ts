import { describe, expect, it } from "vitest";
import { slotTypeOf } from "../../src/cache/templates/slot-types";
import { ask, learnAll, served } from "./templates.serve.support";

/** A return window: the answer copies the delivery time and decides on it. */
const CUTOFF = Date.parse("2024-03-01T00:00:00Z");
const delivered = (at: string) =>
  ask(
    "Refund orders delivered on or after 2024-03-01.",
    `Order delivered at ${at}.`,
    Date.parse(at) >= CUTOFF ? `Delivered ${at}: refund issued.` : `Delivered ${at}: outside the window.`,
  );

describe("learned templates order dates and date-times, never extrapolating them", () => {
  it("Should not serve a date-time outside the range seen (it was an identifier, served for any value of its shape)", () => {
    const t = learnAll([delivered("2024-03-05T10:00:00Z"), delivered("2024-03-09T11:30:00Z"), delivered("2024-03-07T08:15:00Z")]);
    expect(served(t, delivered("2024-03-06T09:00:00Z"))).toEqual(delivered("2024-03-06T09:00:00Z").answer);
    expect(served(t, delivered("2023-01-02T10:00:00Z"))).toBeNull();
    expect(served(t, delivered("2024-03-10T10:00:00Z"))).toBeNull();
  });

  it("Should order date-times with offsets in time, not as text", () => {
    const t = learnAll([delivered("2024-03-05T10:00+02:00"), delivered("2024-03-09T11:30+02:00"), delivered("2024-03-07T08:15+02:00")]);
    // Another offset is served when its time of day lies inside those confirmed both as written and in UTC (07:00Z here).
    expect(served(t, delivered("2024-03-06T10:00+03:00"))).toEqual(delivered("2024-03-06T10:00+03:00").answer);
    // 09:00+05:00 is 04:00Z, before every confirmed time of day in UTC (06:15Z..09:30Z): a cut-off in UTC may decide (template-hunt5).
    expect(served(t, delivered("2024-03-06T09:00+05:00"))).toBeNull();
    // Text order puts it inside (2024-03-05T10 < 2024-03-05T11); in time it is 06:00Z, before the first value (08:00Z).
    expect(served(t, delivered("2024-03-05T11:00+05:00"))).toBeNull();
  });

  it("Should never vary a date written in a local order, nor serve a date that does not exist", () => {
    expect(learnAll([delivered("03/05/2024"), delivered("03/09/2024"), delivered("03/07/2024")])).toBeNull();
    expect(learnAll([delivered("5.3.2024"), delivered("9.3.2024"), delivered("7.3.2024")])).toBeNull();
    expect(slotTypeOf("2024-3-5")).toBe("local-date");
    const t = learnAll([delivered("2024-03-05"), delivered("2024-03-09"), delivered("2024-03-07")]);
    expect(served(t, delivered("2024-03-06"))).toEqual(delivered("2024-03-06").answer);
    expect(served(t, delivered("2024-03-45"))).toBeNull();
  });
});
