import { describe, expect, it } from "vitest";
import { api, newKey, ok, onlyTree, importFor } from "./api-helpers";
import { chat, recorded, uniqueModel } from "./helpers";
import { withUpstream } from "./upstream-stub";
import { azure, filters, message, promptFilters } from "../support/azure-answer";

/**
 * Azure OpenAI annotates every Chat Completions answer: `content_filter_results` on the choice,
 * `prompt_filter_results` at the top level (streamed: in a first chunk with no choices). A hit serves
 * them as the model sent them, JSON or streamed, whichever way the answer was recorded.
 */

function azureChunks(): string[] {
  const base = { created: 1, id: "chatcmpl-A", model: "gpt-4o-2024-08-06", object: "chat.completion.chunk", system_fingerprint: "fp_1" };
  const choice = (delta: Record<string, unknown>, cfr: unknown, finish: string | null = null) =>
    JSON.stringify({ ...base, choices: [{ content_filter_results: cfr, delta, finish_reason: finish, index: 0, logprobs: null }] });
  return [
    JSON.stringify({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: promptFilters }),
    choice({ content: "", refusal: null, role: "assistant" }, {}),
    choice({ content: "Refunded." }, filters),
    choice({}, {}, "stop"),
    "[DONE]",
  ];
}

const ask = (model: string) => ({ model, messages: [{ role: "user", content: "Refund order A-1." }] });

/** The data payloads of a streamed response. */
async function payloads(res: Response): Promise<Array<Record<string, unknown>>> {
  return (await res.text())
    .split("\n\n")
    .filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
}

/** A JSON hit and a streamed hit of `body`. */
async function hits(body: Record<string, unknown>, key?: string, headers: Record<string, string> = {}) {
  await recorded(body, { key, headers });
  const res = await chat(body, { key, headers });
  expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  const json = (await res.json()) as { choices: Array<Record<string, unknown>>; prompt_filter_results?: unknown };
  const streamRes = await chat({ ...body, stream: true }, { key, headers });
  expect(streamRes.headers.get("muscle-mem-cache")).toBe("hit");
  return { json, chunks: await payloads(streamRes) };
}

function expectServed(json: { choices: Array<Record<string, unknown>>; prompt_filter_results?: unknown }, chunks: Array<Record<string, unknown>>): void {
  expect(json.choices[0].content_filter_results).toEqual(filters);
  expect(json.choices[0].message).toEqual(message);
  expect(json.prompt_filter_results).toEqual(promptFilters);
  expect(chunks[0]).toEqual({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: promptFilters });
  const annotated = chunks
    .slice(1)
    .map((c) => (c.choices as Array<Record<string, unknown>>)[0])
    .filter((c) => Object.keys((c.content_filter_results as object | undefined) ?? {}).length > 0);
  expect(annotated).toEqual([expect.objectContaining({ content_filter_results: filters, delta: { content: "Refunded." } })]);
}

describe("Azure OpenAI filter results on a hit", () => {
  it("Should serve a JSON answer's content and prompt filter results on a JSON and a streamed hit", async () => {
    const body = ask(uniqueModel("azure"));
    const miss = await withUpstream({ json: azure }, () => chat(body));
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await miss.arrayBuffer();
    const { json, chunks } = await hits(body);
    expectServed(json, chunks);
  });

  it("Should serve a streamed answer's filter results on a JSON and a streamed hit", async () => {
    const body = ask(uniqueModel("azure-s"));
    const miss = await withUpstream({ sse: azureChunks() }, () => chat({ ...body, stream: true }));
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await miss.arrayBuffer();
    const { json, chunks } = await hits(body);
    expectServed(json, chunks);
  });

  it("Should keep the filter results through an export and an import into another key", async () => {
    const key = newKey();
    const body = ask(uniqueModel("azure-x"));
    const miss = await withUpstream({ json: azure }, () => chat(body, { key }));
    await miss.arrayBuffer();
    await recorded(body, { key });
    const tree = await onlyTree(key);
    const jsonl = (await (await api(`/trees/${tree.id}/export`, { token: key })).text()).trim();
    const other = newKey();
    await ok(importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }));
    const { json, chunks } = await hits(body, other);
    expectServed(json, chunks);
  });
});
