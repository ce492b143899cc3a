import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { generatedCorpus } from "../corpus/generated";
import { handPicked } from "../corpus/hand-picked";
import type { CorpusCase } from "../corpus/types";
import { callWorker } from "./faults.support";

/** Error codes the Worker answers with itself when something broke (never for bad input). */
const OWN_FAILURES = new Set(["internal_error", "upstream_unreachable", "upstream_timeout"]);

const counts = async () => {
  const row = await env.DB.prepare("SELECT (SELECT count(*) FROM nodes) AS nodes, (SELECT count(*) FROM trees) AS trees").first<{
    nodes: number;
    trees: number;
  }>();
  return { nodes: row?.nodes ?? 0, trees: row?.trees ?? 0 };
};

function request(c: CorpusCase): Request {
  const method = c.method ?? "POST";
  return new Request(`http://mm.test${c.route}`, {
    method,
    headers: {
      "content-type": "application/json",
      authorization: "Bearer sk-corpus",
      ...(c.route === "/v1/messages" ? { "anthropic-version": "2023-06-01" } : {}),
      ...c.headers,
    },
    body: method === "GET" || method === "HEAD" ? undefined : c.body,
  });
}

async function check(c: CorpusCase): Promise<void> {
  const before = await counts();
  const call = await callWorker(request(c));
  const status = call.res.status;
  const text = await call.res.text();
  await call.settled();
  let body: { type?: unknown; error?: { message?: unknown; type?: unknown; code?: unknown } } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // a pass-through may answer anything
  }
  // Each API answers in its own envelope: Anthropic's `{type: "error", error: {type, message}}` on /v1/messages,
  // OpenAI's with a code elsewhere; the Worker's own code is in muscle-mem-error either way.
  const code = call.res.headers.get("muscle-mem-error");
  const own = typeof body.error?.message === "string" && typeof body.error?.type === "string" && code !== null;
  const envelope = own && (c.route === "/v1/messages" ? body.type === "error" && body.error?.code === undefined : body.error?.code === code);
  const passedThrough = call.res.headers.get("muscle-mem-cache") !== null;
  if (c.expect === "reject") {
    expect(status, text.slice(0, 300)).toBeGreaterThanOrEqual(400);
    expect(status, text.slice(0, 300)).toBeLessThan(500);
    expect(envelope, text.slice(0, 300)).toBe(true);
    expect(passedThrough).toBe(false);
    expect(await counts()).toEqual(before);
    return;
  }
  // `either`: a 4xx envelope of ours, or the upstream's answer relayed; a 5xx only ever from the upstream.
  if (!passedThrough) {
    expect(status, text.slice(0, 300)).toBeGreaterThanOrEqual(400);
    expect(status, text.slice(0, 300)).toBeLessThan(500);
    expect(envelope, text.slice(0, 300)).toBe(true);
    expect(await counts()).toEqual(before);
  } else if (status >= 500) {
    expect(OWN_FAILURES.has(String(code ?? body.error?.code)), text.slice(0, 300)).toBe(false);
  }
}

const corpus = [...handPicked, ...generatedCorpus()];

describe("the bad-input corpus", () => {
  it("Should hold at least 200 requests with unique names", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(200);
    expect(new Set(corpus.map((c) => c.name)).size).toBe(corpus.length);
  });

  for (const c of corpus) {
    it(`Should answer without a 5xx of its own: ${c.name}`, { timeout: 30_000 }, () => check(c));
  }
});
