import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Issue 17, defect 9: type holes become type errors. The fixture marks each misuse with an
// expect-error directive, so a misuse that type-checks is itself reported as an error here.
describe("Issue 17.9: misuses are type errors", () => {
  it("Should reject unstorable snapshots, unnamed function tools and mistyped params at compile time", () => {
    const root = resolve(import.meta.dirname, "../..");
    const config = ts.getParsedCommandLineOfConfigFile(
      resolve(root, "sdk/tsconfig.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
        },
      },
    );
    if (!config) throw new Error("no sdk/tsconfig.json");
    const program = ts.createProgram([resolve(root, "test/sdk/fixtures/type-holes.ts")], config.options);
    const errors = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : "?";
      return `${d.file?.fileName ?? ""}:${where}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
    expect(errors).toEqual([]);
  }, 60_000);
});
