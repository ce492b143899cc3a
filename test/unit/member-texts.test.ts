import { describe, expect, it } from "vitest";
import { memberTexts } from "../../src/core/exact-json";
describe("memberTexts", () => {
  it("Should give each list element's member as written: spelling, key order, spacing and escapes kept", () => {
    expect(memberTexts('{"content":[{"input":{"b":1.0}},{"type":"text"}]}', "content", "input")).toEqual(['{"b":1.0}', undefined]);
    expect(
      memberTexts(
        ' { "a" : [1, {"x":"]"}], "content" : [ { "type":"t", "input" : { "2":"}\\"," , "1" : [1.0, -2e3] } , "z": true } , 3, "s", [ ] , {"input": -0.50 } ] , "b":null} ',
        "content",
        "input",
      ),
    ).toEqual(['{ "2":"}\\"," , "1" : [1.0, -2e3] }', undefined, undefined, undefined, "-0.50"]);
    expect(memberTexts('{"content":"x"}', "content", "input")).toEqual([]);
    expect(memberTexts('{"content":[]}', "content", "input")).toEqual([]);
    expect(memberTexts('{"content":[{"input":"a\\\\"},{"input":null},{"input":true}]}', "content", "input")).toEqual(['"a\\\\"', "null", "true"]);
  });
});
