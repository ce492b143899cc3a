import fc from "fast-check";
import type { CorpusCase } from "./types";

/** The seed of the generated corpus: the same 150 requests on every run. */
export const CORPUS_SEED = 20_261_122;

const base = () => ({
  model: "echo-corpus-gen",
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Refund order #A-1" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "get_order", arguments: '{"order_id":"A-1"}' } }] },
    { role: "tool", tool_call_id: "call_a", content: '{"status":"delivered"}' },
  ] as unknown[],
});

const hostileString = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", "\u0000", "\ud800", "\u202e", "💥".repeat(50), "null", "__proto__", "constructor", "' OR 1=1 --", "<script>", "%00", "\r\n"),
);
const leaf = fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(hostileString, tie("v"), { maxKeys: 4 }),
  ),
})).v;

/** Sets one field of the valid base request (top level or inside a message) to a hostile value. */
const mutation = fc
  .tuple(
    fc.constantFrom(
      "model",
      "messages",
      "stream",
      "n",
      "tools",
      "tool_choice",
      "stream_options",
      "logprobs",
      "msg.role",
      "msg.content",
      "msg.tool_calls",
      "msg.tool_call_id",
      "call.id",
      "call.function",
      "call.arguments",
    ),
    fc.nat(3),
    value,
  )
  .map(([where, index, v]) => {
    const body = base() as unknown as Record<string, unknown>;
    const messages = body.messages as Array<Record<string, unknown>>;
    const msg = messages[index];
    const call = (messages[2].tool_calls as Array<Record<string, unknown>>)[0];
    if (where.startsWith("msg.")) msg[where.slice(4)] = v;
    else if (where === "call.arguments") (call.function as Record<string, unknown>).arguments = v;
    else if (where.startsWith("call.")) call[where.slice(5)] = v;
    else body[where] = v;
    return { name: `mutate ${where}${where.startsWith("msg.") ? `[${index}]` : ""}`, body: JSON.stringify(body) };
  });

/** Conversations of random roles and tool-call ids: unknown roles, orphan results, missing ids. */
const conversation = fc
  .array(
    fc.record({
      role: fc.constantFrom("user", "assistant", "tool", "system", "developer", "function", "bot", "", "USER"),
      content: fc.option(hostileString, { nil: undefined }),
      id: fc.option(fc.constantFrom("c1", "c2", "", "call_0"), { nil: undefined }),
    }),
    { minLength: 0, maxLength: 6 },
  )
  .map((msgs) => ({
    name: `conversation of ${msgs.map((m) => m.role || "''").join(",") || "nothing"}`,
    body: JSON.stringify({
      model: "echo-corpus-gen",
      messages: msgs.map((m) =>
        m.role === "assistant" && m.id !== undefined
          ? { role: m.role, content: m.content ?? null, tool_calls: [{ id: m.id, type: "function", function: { name: "f", arguments: "{}" } }] }
          : m.role === "tool"
            ? { role: m.role, content: m.content ?? "", ...(m.id === undefined ? {} : { tool_call_id: m.id }) }
            : { role: m.role, ...(m.content === undefined ? {} : { content: m.content }) },
      ),
    }),
  }));

/** Raw bytes-ish text and whole random JSON documents as bodies. */
const rawBody = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }).map((s) => ({ name: "random text body", body: s })),
  value.map((v) => ({ name: "random JSON document", body: JSON.stringify(v) ?? "null" })),
  mutation.map((m) => ({ name: `${m.name}, cut short`, body: m.body.slice(0, Math.floor(m.body.length / 2)) })),
);

/** 150 generated requests (seeded): mutations, random conversations and random bodies. */
export function generatedCorpus(): CorpusCase[] {
  const sample = <T extends { name: string; body: string }>(arb: fc.Arbitrary<T>, n: number, seed: number) => fc.sample(arb, { numRuns: n, seed });
  const chat = [...sample(mutation, 60, CORPUS_SEED), ...sample(conversation, 40, CORPUS_SEED + 1), ...sample(rawBody, 30, CORPUS_SEED + 2)];
  const anthropic = sample(rawBody, 20, CORPUS_SEED + 3);
  return [
    ...chat.map((c, i): CorpusCase => ({ name: `gen ${i}: ${c.name}`, route: "/v1/chat/completions", body: c.body, expect: "either" })),
    ...anthropic.map((c, i): CorpusCase => ({ name: `gen messages ${i}: ${c.name}`, route: "/v1/messages", body: c.body, expect: "either" })),
  ];
}
