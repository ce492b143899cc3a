import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalArguments, canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import type { Bindings } from "../../src/cache/templates/bindings";
import { declaredKeying, hashForm, keyDeclaredAnswer, renderDeclared, withDeclared, type DeclaredKeying } from "../../src/cache/templates/declared";
import { keyAnswer, keyRequest } from "../../src/providers/chat/key";
import { decodeString, jsonLiterals } from "../../src/cache/templates/json-text";
import { renderArguments, substituteArguments } from "../../src/cache/templates/placeholders";

/** An argument tree: literals, bound slots (whole value, inside text, a number), objects with their keys in the model's order. */
type Node =
  | { lit: string }
  | { num: number }
  | { val: boolean | null }
  | { slot: number }
  | { mid: [string, number, string] }
  | { numSlot: number }
  | { arr: Node[] }
  | { obj: Array<[string, Node]> };

/** How the model wrote its JSON: separators and how it escapes literal text (never the bound values: see the fallback tests). */
interface Style {
  comma: string;
  colon: string;
  open: string;
  close: string;
  escapeSlash: boolean;
  unicodeEscapes: boolean;
}

interface Values {
  text: string[];
  numbers: string[];
}

const VARS = 3;
const MARKS = ["§", "¶", "☃"];
const textName = (k: number) => `v${k}`;
const numberName = (k: number) => `n${k}`;

function literal(s: string, style: Style): string {
  let out = JSON.stringify(s);
  if (style.escapeSlash) out = out.replaceAll("/", "\\/");
  if (style.unicodeEscapes) out = out.replace(/[^\x20-\x7e]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return out;
}

/** The text a model would write for `node` with `values`: bound values escaped as JSON.stringify does. */
function write(node: Node, v: Values, s: Style): string {
  if ("lit" in node) return literal(node.lit, s);
  if ("num" in node) return canonicalJson(node.num);
  if ("val" in node) return JSON.stringify(node.val);
  if ("slot" in node) return JSON.stringify(v.text[node.slot]);
  if ("mid" in node)
    return `${literal(`${node.mid[0]} `, s).slice(0, -1)}${JSON.stringify(v.text[node.mid[1]]).slice(1, -1)}${literal(` ${node.mid[2]}`, s).slice(1)}`;
  if ("numSlot" in node) return v.numbers[node.numSlot];
  if ("arr" in node) return `[${s.open}${node.arr.map((n) => write(n, v, s)).join(s.comma)}${s.close}]`;
  return `{${s.open}${node.obj.map(([k, n]) => `${JSON.stringify(k)}${s.colon}${write(n, v, s)}`).join(s.comma)}${s.close}}`;
}

/** The object `node` stands for with `values`, keys in the model's order. */
function build(node: Node, v: Values): unknown {
  if ("lit" in node) return node.lit;
  if ("num" in node) return node.num;
  if ("val" in node) return node.val;
  if ("slot" in node) return v.text[node.slot];
  if ("mid" in node) return `${node.mid[0]} ${v.text[node.mid[1]]} ${node.mid[2]}`;
  if ("numSlot" in node) return Number(v.numbers[node.numSlot]);
  if ("arr" in node) return node.arr.map((n) => build(n, v));
  return Object.fromEntries(node.obj.map(([k, n]) => [k, build(n, v)]));
}

const word = fc.constantFrom("refund", "order", "note", "Ada", "ok", "é", "日本", "a/b", 'say "hi"', "back\\slash", "line\nbreak", "");
const slotIndex = fc.integer({ min: 0, max: VARS - 1 });
const leaf: fc.Arbitrary<Node> = fc.oneof(
  word.map((lit) => ({ lit })),
  fc.constantFrom(0, 1, 2.5, -3, 1e21, 42).map((num) => ({ num })),
  fc.constantFrom(true, false, null).map((val) => ({ val })),
  slotIndex.map((slot) => ({ slot })),
  fc.tuple(word, slotIndex, word).map((mid) => ({ mid })),
  slotIndex.map((numSlot) => ({ numSlot })),
);
const key = fc.constantFrom("order_id", "amount", "note", "zeta", "alpha", "B", "a", "message", "é", "x y");
const tree: fc.Arbitrary<Node> = fc.letrec<{ node: Node; obj: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    tie("obj"),
    fc.array(tie("node"), { maxLength: 3 }).map((arr): Node => ({ arr })),
  ),
  obj: fc.uniqueArray(fc.tuple(key, tie("node")), { selector: ([k]) => k, maxLength: 5 }).map((obj): Node => ({ obj })),
})).obj;
const style: fc.Arbitrary<Style> = fc.record({
  comma: fc.constantFrom(",", ", ", ",\n  "),
  colon: fc.constantFrom(":", ": ", " : "),
  open: fc.constantFrom("", " ", "\n  "),
  close: fc.constantFrom("", " ", "\n"),
  escapeSlash: fc.boolean(),
  unicodeEscapes: fc.boolean(),
});
/** Bound text values: quotes, backslashes, newlines, control characters, any Unicode; each variable's own mark at both ends. */
const core = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', "\\", "\n", "\t", "\u0001", "\u2028", "/", " ", "é", "😀", "{", "}", "x", "Q"),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  ),
  minLength: 1,
  maxLength: 8,
});
const values: fc.Arbitrary<Values> = fc.record({
  text: fc.tuple(core, core, core).map((cores) => cores.map((c, k) => `${MARKS[k]}${c.replace(/[§¶☃\d]/g, "")}${MARKS[k]}`)),
  numbers: fc
    .uniqueArray(fc.oneof(fc.integer({ min: 1000, max: 99_999 }), fc.double({ min: 1000, max: 99_999, noNaN: true })), { minLength: VARS, maxLength: VARS })
    .map((ns) => ns.map((n) => canonicalJson(n))),
});
const bindingsOf = (v: Values): Bindings =>
  Object.fromEntries(
    v.text.flatMap((t, k) => [
      [textName(k), t],
      [numberName(k), v.numbers[k]],
    ]),
  );
const call = (args: string): CanonicalMessage => ({
  role: "assistant",
  tool_calls: [{ id: "call_0", type: "function", function: { name: "refund", arguments: args } }],
});

/** Keys a conversation in which the model already sent `args` once (so every literal is known), as the Worker does. */
function keyed(args: string, bindings: Bindings): DeclaredKeying | null {
  return declaredKeying(
    "t",
    "ns",
    "{}",
    [{ role: "user", content: "Refund it." }, hashForm(call(args)), { role: "tool", tool_call_id: "call_0", content: "ok" }],
    bindings,
  );
}

describe("jsonLiterals and decodeString", () => {
  it("Should list string values and numbers in order, never keys, and decode each unit to where it was written", () => {
    fc.assert(
      fc.property(tree, values, style, (node, v, s) => {
        const text = write(node, v, s);
        const literals = jsonLiterals(text)!;
        const leaves: unknown[] = [];
        const collect = (x: unknown): void => {
          if (typeof x === "string" || typeof x === "number") leaves.push(x);
          else if (Array.isArray(x)) x.forEach(collect);
          else if (x && typeof x === "object") Object.values(x).forEach(collect);
        };
        collect(JSON.parse(text));
        expect(literals.map((l) => JSON.parse(text.slice(l.start, l.end)))).toEqual(leaves);
        for (const l of literals.filter((x) => x.kind === "string")) {
          const { value, offsets } = decodeString(text, l.start, l.end);
          expect(value).toBe(JSON.parse(text.slice(l.start, l.end)));
          for (let k = 0; k < value.length; k++) expect(JSON.parse(`"${text.slice(offsets[k], offsets[k + 1])}"`)).toBe(value[k]);
        }
      }),
      { numRuns: 300 },
    );
    expect(jsonLiterals("{not json")).toBeNull();
    expect(jsonLiterals('{"a":{"b":["c",1,{"d":"e"}]},"f":-2.5e3}')?.map((l) => l.kind)).toEqual(["string", "number", "string", "number"]);
  });
});

describe("declared answers keep the model's argument text", () => {
  it("Should give back the model's arguments byte for byte with the same values, and in the model's key order with other values", () => {
    fc.assert(
      fc.property(tree, style, values, values, (node, s, a, b) => {
        const args = write(node, a, s);
        const keying = keyed(args, bindingsOf(a));
        fc.pre(keying !== null);
        const stored = keyDeclaredAnswer("parent", call(args), keying!);
        expect(stored).not.toBeNull();
        const same = renderDeclared(stored!.message, keying!);
        expect(same?.tool_calls?.[0].function.arguments).toBe(args);
        const other = renderDeclared(stored!.message, { ...keying!, bindings: bindingsOf(b) })?.tool_calls?.[0].function.arguments;
        expect(other).toBe(write(node, b, s));
        expect(JSON.stringify(JSON.parse(other!))).toBe(JSON.stringify(build(node, b)));
        // The hash and the keys of the declared tree are those of the canonical form, as before.
        const canonical = keyDeclaredAnswer("parent", hashForm(call(args)), keying!);
        expect(stored!.hash).toBe(canonical!.hash);
        expect(hashForm(stored!.message)).toEqual(canonical!.message);
      }),
      { numRuns: 400 },
    );
  });

  it("Should store the model's key order and spacing with placeholders in place", () => {
    const args = '{"order_id": "A-1", "amount": 1999, "note": "for Ada \\u00e9"}';
    const bindings = { order_id: "A-1", amount: "1999", name: "Ada" };
    const stored = keyDeclaredAnswer("p", call(args), keyed(args, bindings)!)!;
    expect(stored.message.tool_calls?.[0].function.arguments).toBe('{"order_id": "{{order_id}}", "amount": "{{#amount}}", "note": "for {{name}} \\u00e9"}');
    const rendered = renderDeclared(stored.message, { ...keyed(args, bindings)!, bindings: { order_id: 'B"7\\', amount: "2450", name: "Zoë\n😀" } });
    expect(rendered?.tool_calls?.[0].function.arguments).toBe('{"order_id": "B\\"7\\\\", "amount": 2450, "note": "for Zoë\\n😀 \\u00e9"}');
  });

  it.each([
    ["a bound value written with escapes", '{"zeta":"\\u0041da","alpha":1}', { name: "Ada" }],
    ["a bound number in a non-canonical form", '{"zeta":1999.0,"alpha":1}', { amount: "1999" }],
  ])("Should fall back to sorted keys for %s, and still render right", (_, args, bindings: Bindings) => {
    expect(substituteArguments(args, bindings)).toBeNull();
    // The request holds the value as JSON.stringify writes it: a request's `1999.0` keys as its text (declared-hunt.test.ts).
    const keying = keyed(JSON.stringify(JSON.parse(args)), bindings)!;
    const stored = keyDeclaredAnswer("p", call(args), keying)!;
    const text = stored.message.tool_calls![0].function.arguments;
    expect(text).toBe(canonicalArguments(text));
    expect(JSON.parse(renderDeclared(stored.message, keying)!.tool_calls![0].function.arguments)).toEqual(JSON.parse(args));
    const other = Object.fromEntries(Object.keys(bindings).map((k) => [k, bindings[k] === "Ada" ? 'B"ob' : "7"]));
    const expected = JSON.parse(args) as Record<string, unknown>;
    expected.zeta = typeof expected.zeta === "number" ? 7 : 'B"ob';
    expect(JSON.parse(renderDeclared(stored.message, { ...keying, bindings: other })!.tool_calls![0].function.arguments)).toEqual(expected);
  });

  it("Should keep keys and non-JSON arguments as they were: keys are never substituted", () => {
    expect(substituteArguments('{"Ada": "Ada"}', { name: "Ada" })).toBe('{"Ada": "{{name}}"}');
    expect(substituteArguments("refund Ada now", { name: "Ada" })).toBe("refund {{name}} now");
    expect(renderArguments('{"{{name}}": "{{name}}"}', { name: 'x"' })).toBe('{"{{name}}": "x\\""}');
  });

  it("Should miss, never guess, for a placeholder written with escapes, an unbound one or a number placeholder given text", () => {
    expect(renderArguments('{"a":"\\u007b{name}}"}', { name: "Ada" })).toBeNull();
    expect(renderArguments('{"a":"{{name}}"}', {})).toBeNull();
    expect(renderArguments('{"a":"{{#n}}"}', { n: "lots" })).toBeNull();
    expect(renderArguments('{"a":"x {{#n}}"}', { n: "1" })).toBeNull();
  });

  it("Should render in place to the same JSON as rendering the canonical form, or miss", () => {
    const placeholder = fc.constantFrom("{{v0}}", "{{v1}}", "{{#n0}}", "{{nope}}", "\\u007b{v0}}", "{{v0}", "x");
    const withPlaceholders = fc.tuple(tree, style, values, fc.array(placeholder, { minLength: 1, maxLength: 4 })).map(([node, s, v, ps]) => {
      const text = write(node, v, s);
      let i = 0;
      return text.replace(/"[^"\\]*"(?!\s*:)/g, (m) => (i < ps.length ? `"${ps[i++]}"` : m));
    });
    fc.assert(
      fc.property(withPlaceholders, values, (text, v) => {
        fc.pre(jsonLiterals(text) !== null);
        const inPlace = renderArguments(text, bindingsOf(v));
        const viaCanonical = renderArguments(canonicalArguments(text), bindingsOf(v));
        if (inPlace !== null) expect(canonicalArguments(inPlace)).toBe(viaCanonical);
        if (!text.includes("\\u007b")) expect(inPlace === null).toBe(viaCanonical === null);
      }),
      { numRuns: 300 },
    );
  });

  it("Should key requests and answers the same whatever the key order, and store each in the order it was sent", () => {
    const bindings = { order_id: "A-1", amount: "1999" };
    const refund = (args: string) => ({
      role: "assistant" as const,
      content: null,
      tool_calls: [{ id: "c1", type: "function" as const, function: { name: "refund", arguments: args } }],
    });
    const body = (args: string) => ({
      model: "m",
      messages: [{ role: "user" as const, content: "Refund A-1" }, refund(args), { role: "tool" as const, tool_call_id: "c1", content: "ok" }],
    });
    const unsorted = '{"order_id": "A-1", "amount": 1999}';
    const sorted = '{"amount":1999,"order_id":"A-1"}';
    const key = (args: string) => {
      const keyed = keyRequest(body(args), "t", "ns");
      if (!keyed.ok) throw new Error("not keyed");
      return withDeclared(keyed.key, bindings)!;
    };
    const [a, b] = [key(unsorted), key(sorted)];
    expect(a.path.map((s) => s.hash)).toEqual(b.path.map((s) => s.hash));
    expect(a.path[1].message.tool_calls?.[0].function.arguments).toBe('{"order_id": "{{order_id}}", "amount": "{{#amount}}"}');
    expect(b.path[1].message.tool_calls?.[0].function.arguments).toBe('{"amount":"{{#amount}}","order_id":"{{order_id}}"}');
    const [answerA, answerB] = [keyAnswer(a, refund(unsorted)), keyAnswer(b, refund(sorted))];
    expect(answerA?.hash).toBe(answerB?.hash);
    expect(JSON.parse(answerA!.json).tool_calls[0].function.arguments).toBe('{"order_id": "{{order_id}}", "amount": "{{#amount}}"}');
  });
});
