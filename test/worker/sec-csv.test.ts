import { describe, expect, it } from "vitest";
import { cell, toCsv } from "../../dashboard/js/requests-export.js";

/** A request-log row as GET /api/requests gives it, with client-chosen text in its string fields. */
function row(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    at: 1_700_000_000_000,
    request_id: "r-1",
    outcome: "miss",
    status: 200,
    route: "/v1/chat/completions",
    model: "gpt-x",
    namespace: "default",
    tree_id: null,
    latency_ms: -1,
    count: 1,
    explanation: null,
    ...fields,
  };
}

describe("the dashboard's CSV export of the request log", () => {
  it("Should write client-chosen text that a spreadsheet reads as a formula as text (CSV injection)", () => {
    // A model name is anything the client sends; request ids may start with = + - @ (src/observability/request-id.ts).
    const csv = toCsv([row({ model: '=HYPERLINK("http://evil.example","x")', request_id: "=1+2", namespace: "-ns", reason: "@SUM(A1)" })]);
    const line = csv.split("\n")[1];
    expect(line).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(line).toContain(",'=1+2,");
    expect(line).toContain(",'-ns,");
    expect(line).toContain(",'@SUM(A1),");
    for (const value of line.split(",")) expect(value).not.toMatch(/^[=+@]/);
  });

  it("Should neutralise a leading tab or carriage return and keep numbers, negative ones included, as numbers", () => {
    expect(cell("\tcmd")).toBe("'\tcmd");
    expect(cell("\r=1")).toBe(`"'\r=1"`);
    expect(cell(-1)).toBe("-1");
    expect(cell("plain")).toBe("plain");
    expect(cell(null)).toBe("");
  });
});
