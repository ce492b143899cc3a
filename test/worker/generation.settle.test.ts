import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { generate, type AnswerReader, type Recording } from "../../src/engine/generation";
import { faultBase } from "./faults.support";
import { uniqueModel } from "./helpers";

/** A recording as a reader would build it; its content does not matter here, only that it is not null. */
const SOME_RECORDING = { treeId: "t" } as unknown as Recording;

const boom = () => {
  throw new Error("reader bug");
};

/** A reader whose JSON path, stream feed or stream finish throws (or none of them). */
function readerThat(fails: "json" | "feed" | "finish" | "never"): AnswerReader {
  return {
    fromJson: () => (fails === "json" ? boom() : SOME_RECORDING),
    stream: () => ({ feed: () => (fails === "feed" ? boom() : undefined), finish: () => (fails === "finish" ? boom() : SOME_RECORDING) }),
  };
}

/** Runs one generation against the test upstream; every onSettled call and every waitUntil promise is kept. */
async function run(
  reader: AnswerReader,
  stream: boolean,
  base: string = env.UPSTREAM_BASE_URL,
): Promise<{ res: Response; settled: Recording[]; drain: () => Promise<unknown> }> {
  const raw = JSON.stringify({ model: uniqueModel("echo"), stream, messages: [{ role: "user", content: "settle once" }] });
  const request = new Request("http://mm.test/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-settle" },
    body: raw,
  });
  const settled: Recording[] = [];
  const pending: Array<Promise<unknown>> = [];
  const res = await generate({
    request,
    raw,
    base,
    pathname: "/v1/chat/completions",
    stream,
    outcome: "miss",
    reader,
    onSettled: async (recording) => void settled.push(recording),
    waitUntil: (p) => void pending.push(p),
  });
  return { res, settled, drain: () => Promise.all(pending) };
}

describe("generate settles its claim exactly once", () => {
  const cases: Array<[fails: "json" | "feed" | "finish" | "never", stream: boolean, expected: "null" | "recording"]> = [
    ["never", false, "recording"],
    ["never", true, "recording"],
    ["json", false, "null"],
    ["feed", true, "null"],
    ["finish", true, "null"],
  ];
  for (const [fails, stream, expected] of cases) {
    it(`Should relay the model's answer and settle once with ${expected} when the reader ${fails === "never" ? "works" : `throws in ${fails}`} (stream: ${stream})`, async () => {
      const { res, settled, drain } = await run(readerThat(fails), stream);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(stream ? "data: [DONE]" : "echo: settle once");
      await drain();
      expect(settled).toEqual([expected === "null" ? null : SOME_RECORDING]);
    });
  }

  it("Should settle once with null and answer 502 upstream_incomplete when the JSON body is cut after its headers", async () => {
    const { res, settled, drain } = await run(readerThat("never"), false, faultBase("cut-json").base);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_incomplete");
    await drain();
    expect(settled).toEqual([null]);
  });
});
