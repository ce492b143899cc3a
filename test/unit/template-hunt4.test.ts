import { describe, expect, it } from "vitest";
import type { Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { explainLearned } from "../../src/cache/templates/serve";
import { ask, learnAll, served } from "./templates.serve.support";

/**
 * The fourth template hunt (an IT/ops desk, tools/eval-workflows/ops.ts): each workflow is recorded on some
 * values and replayed on others; the scripted model decides, and a template must render exactly its answer
 * or miss. Every case here was served the wrong answer before its rule.
 */
function wrongOrMiss(train: readonly Trajectory[], request: Trajectory): { served: unknown; model: unknown } {
  const got = served(learnAll(train), request);
  return { served: got === null ? null : got.content, model: request.answer.content };
}

/** Why the template learned from `train` does not serve `request` (explainLearned's first reason). */
function reasonFor(train: readonly Trajectory[], request: Trajectory): string | undefined {
  const t = learnAll(train);
  const outcome = t && explainLearned([t], request.messages.map(decompose), 3);
  return outcome && "reasons" in outcome ? outcome.reasons[0] : undefined;
}

const ALLOWED = ["downloads.example.com", "mirror.example.org", "cdn.example.net"];

/** An upgrade from a package URL (one token: domain, path, file and extension): allowed domains only, executables quarantined. */
const install = (url: string, ticket: string) =>
  ask(
    "Packages come only from downloads.example.com, mirror.example.org or cdn.example.net; executables are quarantined.",
    `${ticket}: install https://${url}`,
    !ALLOWED.includes(url.split("/")[0])
      ? `${ticket}: ${url} is not on the allow-list.`
      : url.endsWith(".exe")
        ? `${ticket}: quarantined ${url}.`
        : `${ticket}: scheduled ${url}.`,
  );

describe("the words inside an identifier (a domain, a path, an extension) are closed-class", () => {
  const train = [
    install("downloads.example.com/pkgs/agent-2.5.1.deb", "INC0010001"),
    install("mirror.example.org/pkgs/agent-2.5.1.rpm", "INC0010002"),
    install("cdn.example.net/pkgs/agent-2.5.1.msi", "INC0010003"),
  ];

  it("Should not install agent-2.5.1.exe from installs of .deb, .rpm and .msi (the letters varied: `exe` is as long as `deb`)", () => {
    const request = install("mirror.example.org/pkgs/agent-2.5.1.exe", "INC0010004");
    expect(wrongOrMiss(train, request)).toEqual({ served: null, model: "INC0010004: quarantined mirror.example.org/pkgs/agent-2.5.1.exe." });
    expect(reasonFor(train, request)).toContain("`exe`");
  });

  it("Should not install from mirror.badhost.org (a domain of the same shape and lengths as an allowed one)", () => {
    const request = install("mirror.badhost.org/pkgs/agent-2.5.1.deb", "INC0010004");
    expect(wrongOrMiss(train, request)).toEqual({ served: null, model: "INC0010004: mirror.badhost.org/pkgs/agent-2.5.1.deb is not on the allow-list." });
  });

  it("Should not install from cdn.example.org (each word confirmed at its place, never together)", () => {
    const request = install("cdn.example.org/pkgs/agent-2.5.1.rpm", "INC0010004");
    expect(wrongOrMiss(train, request).served).toBeNull();
  });

  it("Should serve the words of a confirmed value with new digits and short letters (data: the ticket, the version)", () => {
    const request = install("cdn.example.net/pkgs/agent-2.5.1.msi", "INC0010009");
    expect(wrongOrMiss(train, request).served).toBe("INC0010009: scheduled cdn.example.net/pkgs/agent-2.5.1.msi.");
  });
});
