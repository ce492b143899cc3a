import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { tenantOf } from "../../src/core/hash";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest, type ChatRequest } from "../../src/core/messages";
import { SseAssembler } from "../../src/providers/chat/sse-assembler";

const text = fc.string({ unit: "grapheme", maxLength: 30 });
const callId = fc.string({ minLength: 1, maxLength: 12 });
const args = fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

/** A conversation with tool calls and their results, and the ids it used (in order). */
const conversation = fc
  .array(fc.record({ user: text, calls: fc.array(fc.tuple(fc.constantFrom("get_order", "refund"), args, text), { maxLength: 3 }) }), {
    minLength: 1,
    maxLength: 4,
  })
  .map((turns) => {
    const messages: unknown[] = [];
    // Each call's arguments as generated: the disguise re-serialises these, never JSON.parse's reading of the
    // text (workerd's JSON.parse can misread a key with an escaped quote: test/worker/json-parse-keys.test.ts).
    const argsOf: Record<string, Record<string, unknown>> = {};
    let n = 0;
    for (const turn of turns) {
      messages.push({ role: "user", content: turn.user });
      if (turn.calls.length === 0) continue;
      const ids = turn.calls.map(() => `id${n++}`);
      turn.calls.forEach(([, a], i) => {
        argsOf[ids[i]] = a;
      });
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: turn.calls.map(([name, a], i) => ({ id: ids[i], type: "function", function: { name, arguments: JSON.stringify(a) } })),
      });
      turn.calls.forEach(([, , result], i) => messages.push({ role: "tool", tool_call_id: ids[i], content: result }));
    }
    return { messages, count: n, argsOf };
  });

const parse = (body: unknown): ChatRequest => chatRequest.parse(body);
const hashes = (body: unknown, tenant = tenantOf("Bearer k"), ns = "default") => {
  const keyed = keyRequest(parse(body), tenant, ns);
  if (!keyed.ok) throw new Error(JSON.stringify(keyed));
  return keyed.key.path.map((s) => s.hash);
};

/** Renames every id `idN` through a random injective map, and re-serialises arguments with reordered keys and spaces. */
function disguise(messages: unknown[], names: string[], argsOf: Record<string, Record<string, unknown>>): unknown[] {
  const rename = (id: string) => names[Number(id.slice(2))];
  return messages.map((m) => {
    const msg = m as { role: string; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };
    if (msg.tool_calls) {
      return {
        ...msg,
        tool_calls: msg.tool_calls.map((c) => {
          const reordered = Object.fromEntries(Object.entries(argsOf[c.id]).reverse());
          return { ...c, id: rename(c.id), function: { ...c.function, arguments: JSON.stringify(reordered, null, 1) } };
        }),
      };
    }
    return msg.tool_call_id ? { ...msg, tool_call_id: rename(msg.tool_call_id) } : msg;
  });
}

describe("properties of the canonical form and hashing", () => {
  it("Should key a conversation the same under any renaming of tool-call ids and any argument key order or spacing", () => {
    fc.assert(
      fc.property(conversation, fc.uniqueArray(callId, { minLength: 12, maxLength: 12 }), ({ messages, argsOf }, names) => {
        expect(hashes({ model: "m", messages: disguise(messages, names, argsOf) })).toEqual(hashes({ model: "m", messages }));
      }),
    );
  });

  it("Should serialise canonical JSON idempotently", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(JSON.parse(canonicalJson(v)))).toBe(canonicalJson(v));
      }),
    );
  });

  it("Should give different keys different tenants, and so different trees for the same conversation", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), conversation, (a, b, { messages }) => {
        fc.pre(a !== b);
        const ta = tenantOf(`Bearer ${a}`);
        const tb = tenantOf(`Bearer ${b}`);
        expect(ta).not.toBe(tb);
        const body = { model: "m", messages };
        expect(hashes(body, ta)[0]).not.toBe(hashes(body, tb)[0]);
      }),
    );
  });

  it("Should keep the tree when only transport parameters change, and split it on any other parameter", () => {
    fc.assert(
      fc.property(
        conversation,
        fc.boolean(),
        text,
        fc.constantFrom("temperature", "max_tokens", "seed", "tool_choice", "x_unknown"),
        fc.integer({ min: 1, max: 9 }),
        ({ messages }, stream, user, param, value) => {
          const plain = hashes({ model: "m", messages });
          expect(hashes({ model: "m", messages, stream, user, metadata: { user }, stream_options: stream ? { include_usage: true } : null })).toEqual(plain);
          expect(hashes({ model: "m", messages, [param]: value })[0]).not.toBe(plain[0]);
        },
      ),
    );
  });
});

/** Streams a message the way OpenAI does: content in pieces, tool calls as a header then argument pieces. */
function stream(content: string | null, calls: Array<[string, string]>, pieces: number[], usage: boolean): string {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const split = (s: string): string[] => {
    const chars = [...s];
    const out: string[] = [];
    let i = 0;
    for (const p of pieces.length ? pieces : [chars.length || 1]) {
      if (i >= chars.length) break;
      out.push(chars.slice(i, i + p).join(""));
      i += p;
    }
    if (i < chars.length) out.push(chars.slice(i).join(""));
    return out;
  };
  // A model with no text sends content null; one with text opens with "" (as OpenAI does).
  let out = chunk({ role: "assistant", content: content === null ? null : "" });
  if (content !== null) for (const part of split(content)) out += chunk({ content: part });
  calls.forEach(([name, a], index) => {
    out += chunk({ tool_calls: [{ index, id: `call_${index}`, type: "function", function: { name, arguments: "" } }] });
    for (const part of split(a)) out += chunk({ tool_calls: [{ index, function: { arguments: part } }] });
  });
  out += chunk({}, calls.length ? "tool_calls" : "stop");
  if (usage) out += `data: ${JSON.stringify({ id: "c", choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

function assemble(bytes: Uint8Array, cuts: number[]): ReturnType<SseAssembler["result"]> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const assembler = new SseAssembler();
  let start = 0;
  for (const p of [...points, bytes.length]) {
    assembler.feed(bytes.slice(start, p));
    start = p;
  }
  return assembler.result();
}

describe("properties of SSE assembly", () => {
  const message = fc.record({
    content: fc.option(fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }), { nil: null }),
    calls: fc.array(
      fc.tuple(
        fc.constantFrom("get_order", "refund", "notify"),
        args.map((a) => JSON.stringify(a)),
      ),
      { maxLength: 3 },
    ),
    pieces: fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 8 }),
    usage: fc.boolean(),
  });

  it("Should assemble the same message for any piece sizes and any byte cuts, even inside UTF-8 sequences", () => {
    fc.assert(
      fc.property(message, fc.array(fc.nat(), { maxLength: 20 }), ({ content, calls, pieces, usage }, cuts) => {
        const bytes = new TextEncoder().encode(stream(content, calls, pieces, usage));
        const whole = assemble(bytes, []);
        const cut = assemble(bytes, cuts);
        expect(cut).toEqual(whole);
        expect(whole?.message.content).toBe(content);
        expect(whole?.message.tool_calls?.map((c) => [c.function.name, c.function.arguments]) ?? []).toEqual(calls);
        expect(whole?.finishReason).toBe(calls.length ? "tool_calls" : "stop");
      }),
    );
  });

  it("Should assemble nothing from any strict prefix of a stream (a stream cut anywhere before [DONE])", () => {
    fc.assert(
      fc.property(message, fc.nat(), ({ content, calls, pieces, usage }, at) => {
        const bytes = new TextEncoder().encode(stream(content, calls, pieces, usage));
        const end = bytes.length - "data: [DONE]\n\n".length;
        expect(assemble(bytes.slice(0, at % end), [at])).toBeNull();
      }),
    );
  });
});
