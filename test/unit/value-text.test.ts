import { describe, expect, it } from "vitest";
import { compactJson, valueTextAt } from "../../src/core/exact-json";
import { spelledJson } from "../../src/core/spelled-json";
import { callArgsTexts, withArgsTexts } from "../../src/providers/gemini/args-text";
import type { CanonicalPart } from "../../src/providers/gemini/schema";

describe("valueTextAt", () => {
  it("Should give the value at a path as written: spelling, key order, spacing and escapes kept", () => {
    const text = ' { "a" : [1, {"x":"]"}], "c\\"" : { "p" : [ {"n": 1.0}, { "args" : { "2":"}\\"" , "1" : [1.0, -2e3] } } ] } } ';
    expect(valueTextAt(text, ['c"', "p", 1, "args"])).toBe('{ "2":"}\\"" , "1" : [1.0, -2e3] }');
    expect(valueTextAt(text, ['c"', "p", 0, "n"])).toBe("1.0");
    expect(valueTextAt(text, ["a", 1, "x"])).toBe('"]"');
    expect(valueTextAt(text, [])).toBe(text.trim());
  });

  it("Should give nothing where the path leads nowhere, and the last of a repeated member (as JSON.parse)", () => {
    expect(valueTextAt('{"a":[1,2]}', ["a", 2])).toBeUndefined();
    expect(valueTextAt('{"a":[1,2]}', ["a", "0"])).toBeUndefined();
    expect(valueTextAt('{"a":[1,2]}', ["b"])).toBeUndefined();
    expect(valueTextAt('{"a":{"b":1}}', ["a", 0])).toBeUndefined();
    expect(valueTextAt('{"a":1,"a":2.0}', ["a"])).toBe("2.0");
    expect(valueTextAt('{"a":[]}', ["a", 0])).toBeUndefined();
  });
});

describe("compactJson", () => {
  it("Should drop the whitespace between tokens and keep strings, numbers and key order as written", () => {
    expect(compactJson('{\n  "n": 1.0,\r\n\t"s": "a b\\" c",\n  "1": [ 1e2 , 12345678901234567891 ]\n}')).toBe(
      '{"n":1.0,"s":"a b\\" c","1":[1e2,12345678901234567891]}',
    );
    expect(compactJson('{"a":1}')).toBe('{"a":1}');
  });
});

describe("spelledJson with objects written as their text", () => {
  it("Should write each mapped object (by identity) as its text, beside the spellings", () => {
    const args = JSON.parse('{"b":1.0,"1":12345678901234567891}') as object;
    const same = { b: 1, 1: 12345678901234567000 };
    const value = { t: 1, parts: [{ args }, { args: same }] };
    const written = new Map<object, string>([[args, '{"b":1.0,"1":12345678901234567891}']]);
    expect(spelledJson(value, [["/t", "1.0"]], written)).toBe(
      '{"t":1.0,"parts":[{"args":{"b":1.0,"1":12345678901234567891}},{"args":{"1":12345678901234567000,"b":1}}]}',
    );
    expect(spelledJson(value, [], written)).toContain('{"args":{"b":1.0,"1":12345678901234567891}}');
    expect(spelledJson(value, [], new Map())).toBe(JSON.stringify(value));
  });
});

describe("Gemini call args as written", () => {
  it("Should read each call's args from candidate 0's parts, compact, undefined for a call without args", () => {
    const text = '{"candidates":[{"content":{"parts":[{"text":"a"},{"functionCall":{"name":"f"}},{"functionCall":{"name":"g","args":{ "n" : 1.0 }}}]}}]}';
    const parts = (JSON.parse(text) as { candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }> }).candidates[0].content.parts;
    expect(callArgsTexts(text, parts)).toEqual([undefined, '{"n":1.0}']);
    expect(callArgsTexts('{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}', [{ text: "a" }])).toEqual([]);
  });

  it("Should store a text only where it is the stored args' value written otherwise", () => {
    const parts: CanonicalPart[] = [
      { text: "x" },
      { functionCall: { name: "f", argsJson: '{"n":1}' } },
      { functionCall: { name: "g", argsJson: '{"n":1}' } },
      { functionCall: { name: "h" } },
    ];
    const out = withArgsTexts(parts, ['{"n":1.0}', '{"n":2}', '{"n":1}']);
    expect(out.map((p) => (p as { functionCall?: { argsJson?: string } }).functionCall?.argsJson)).toEqual([undefined, '{"n":1.0}', '{"n":1}', undefined]);
    expect(withArgsTexts(parts, ['{"n":1}', "not json"])).toBe(parts);
  });
});
