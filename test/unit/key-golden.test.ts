import { describe, expect, it } from "vitest";
import tauBench from "../fixtures/workloads/tau_bench.jsonl?raw";
import tau2Bench from "../fixtures/workloads/tau2_bench.jsonl?raw";
import { parseJsonText } from "../../src/core/body";
import { digest } from "../../src/core/hash";
import { chatAdapter } from "../../src/providers/chat/adapter";

/**
 * Key stability over the shipped workloads (test/fixtures/workloads): every model request of every
 * trajectory, read and keyed as the chat route reads and keys it (the body's text, then parse, then the
 * adapter's key), and the recording built from the answer the model gave. The digests below were computed
 * by the code before the keying path was optimised (bench/parse-key.ts): a change to any request's tree, h_n,
 * path step, stored message or recorded answer changes them. They must never be updated to go green: a
 * different key is a tree every deployment loses.
 */

interface Line {
  model: string;
  tools: unknown[] | null;
  scripted_assistant_idx?: number[] | null;
  messages: Array<{ role: string; tool_calls?: unknown }>;
}

/** The model requests of the trajectories (as tools/workloads.ts `requestsOf`: duplicates keep the first answer). */
function requests(jsonl: string): Array<{ body: object; answer: Line["messages"][number] }> {
  const seen = new Set<string>();
  const out: Array<{ body: object; answer: Line["messages"][number] }> = [];
  for (const text of jsonl.split("\n").filter(Boolean)) {
    const line = JSON.parse(text) as Line;
    const scripted = new Set(line.scripted_assistant_idx ?? []);
    line.messages.forEach((answer, i) => {
      if (answer.role !== "assistant" || scripted.has(i) || i === 0) return;
      const body = { model: line.model, ...(line.tools ? { tools: line.tools } : {}), messages: line.messages.slice(0, i) };
      const key = JSON.stringify(body);
      if (seen.has(key)) return;
      seen.add(key);
      out.push({ body, answer });
    });
  }
  return out;
}

const scope = { tenant: "golden-tenant", namespace: "default", maxMessageBytes: 256 * 1024 };
const headers = new Headers({ "content-type": "application/json", authorization: "Bearer sk-golden" });
const url = new URL("https://mm.test/v1/chat/completions");

/** One line per request: tree, h_n, each step's hash, parent, role and stored JSON (digested), the recorded answer. */
function keyLines(raws: string[], answers: Array<Line["messages"][number]>): string[] {
  return raws.map((raw, i) => {
    const { body } = parseJsonText(raw, chatAdapter.schema);
    const keyed = chatAdapter.key({ body, raw, url, headers }, scope);
    if (!keyed.ok) return "bypass" in keyed ? `bypass ${keyed.bypass}` : `invalid ${keyed.invalid.message}`;
    const k = keyed.key;
    const steps = k.path.map((s) => `${s.hash}<${s.parent}:${s.role}:${digest(s.json)}`).join(" ");
    const answer = answers[i];
    const completion = JSON.stringify({
      id: "chatcmpl-golden",
      object: "chat.completion",
      choices: [{ index: 0, message: answer, finish_reason: answer.tool_calls ? "tool_calls" : "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 5 },
    });
    const recording = chatAdapter.reader(k, { body, raw, url, headers }).fromJson(completion, 7);
    const recorded = recording ? `${recording.answer.hash}<${recording.answer.parent}:${digest(recording.answer.json)}` : "not recorded";
    return `${k.treeId} ${k.key} ${k.frameJson.length} ${steps} => ${recorded}`;
  });
}

const all = [...requests(tauBench), ...requests(tau2Bench)];
const answers = all.map((r) => r.answer);

describe("keys of the shipped workloads' requests (golden)", () => {
  it("are byte-identical to the keys recorded before the keying path was optimised (bodies as JSON.stringify writes them)", () => {
    const lines = keyLines(
      all.map((r) => JSON.stringify(r.body)),
      answers,
    );
    expect(lines.length).toBe(789);
    expect(lines.filter((l) => l.startsWith("bypass") || l.startsWith("invalid"))).toEqual([]);
    expect(digest(lines.join("\n"))).toBe("2c066b44818c3ad854743b9c95664775");
  });

  it("are byte-identical for the same bodies indented, with a sampling parameter spelled 0.50 (its text keyed)", () => {
    const lines = keyLines(
      all.map((r) => JSON.stringify({ temperature: 0.5, ...r.body }, null, 1).replace('"temperature": 0.5', '"temperature": 0.50')),
      answers,
    );
    expect(digest(lines.join("\n"))).toBe("f38a091f90b41b02bc73e6fb794b889d");
  });
});
