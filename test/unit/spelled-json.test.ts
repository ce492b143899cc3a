import { describe, expect, it } from "vitest";
import { spelledJson, writesNumber } from "../../src/core/spelled-json";

describe("spelledJson", () => {
  it("Should write each spelled number as its text, nested and in arrays", () => {
    const value = { t: 1, n: [2.5, 3], o: { "a/b": 1e-7 } };
    expect(
      spelledJson(value, [
        ["/t", "1.0"],
        ["/n/0", "2.50"],
        ["/o/a~1b", "1e-07"],
      ]),
    ).toBe('{"t":1.0,"n":[2.50,3],"o":{"a/b":1e-07}}');
  });

  it("Should splice spellings given in any order, each only at its own pointer (an object shared elsewhere unchanged there)", () => {
    const shared = { s: 0.5 };
    const value = { a: 1, b: [shared, 2], c: shared };
    expect(
      spelledJson(value, [
        ["/b/1", "2.0"],
        ["/c/s", "0.50"],
        ["/a", "1e0"],
      ]),
    ).toBe('{"a":1e0,"b":[{"s":0.5},2.0],"c":{"s":0.50}}');
    expect(value).toStrictEqual({ a: 1, b: [{ s: 0.5 }, 2], c: { s: 0.5 } });
  });

  it("Should leave out a spelling that would change the value or names no number", () => {
    const value = { t: 1, s: "1", n: null, x: [1] };
    const spellings: Array<[string, string]> = [
      ["/t", "2"],
      ["/s", "1.0"],
      ["/n", "0"],
      ["/missing", "1.0"],
      ["/x/1", "1.0"],
      ["/t", '1.0,"y":2'],
      ["/x/0", "1e400"],
    ];
    expect(spelledJson(value, spellings)).toBe(JSON.stringify(value));
  });

  it("Should write a string that looks like the marker as itself", () => {
    const value = { a: "\u0000mm-number-", b: 1 };
    expect(JSON.parse(spelledJson(value, [["/b", "1.0"]]))).toStrictEqual(value);
  });

  it("Should accept only JSON number texts of exactly the value", () => {
    expect(writesNumber("1.0", 1)).toBe(true);
    expect(writesNumber("1.2e-05", 0.000012)).toBe(true);
    expect(writesNumber("01", 1)).toBe(false);
    expect(writesNumber(" 1", 1)).toBe(false);
    expect(writesNumber("-0", 0)).toBe(false);
    expect(writesNumber("12345678901234567893", Number("12345678901234567893"))).toBe(false);
  });
});
