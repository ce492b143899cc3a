import type { ChatBody, ScriptedMessage } from "../scripted-model";

/** A tool call as the agent harness executes it. */
export interface CallRequest {
  name: string;
  args: Record<string, unknown>;
}

/** One structured workflow: the agent's prompt and tools, its cases, its tools' results and its scripted model. */
export interface Workflow<Case> {
  name: string;
  system: string;
  tools: unknown[];
  /** A case of a given kind; `trap` kinds are the ones the warm-up never shows. */
  makeCase(rng: () => number, kind: string): Case;
  /** The kinds of ordinary cases, with weights, and of traps. */
  kinds: Array<[string, number]>;
  traps: string[];
  userMessage(c: Case): string;
  /** What the tools answer for this case (the world the agent acts on). */
  execTool(c: Case, call: CallRequest): unknown;
  /** The model: deterministic in the messages it is given (tool-call ids are fresh). */
  script(body: ChatBody): ScriptedMessage;
  /** The values a client would declare for this case (`muscle-mem-bindings`): copied values only, never decision inputs. */
  bindingsOf(c: Case): Record<string, string>;
  /**
   * What makes a run "in range" (run.ts): its class (every value the model may decide on: a status, a
   * plan, a country, a place) and its ranged values (amounts, seats, days). A new run is in range when at
   * least 3 earlier runs had its class and each ranged value lies inside what they had. Without it, no run is.
   */
  rangeOf?(c: Case): { cls: string; ranged: number[] };
}

let counter = 0;
/** A fresh tool-call id, as real models make one per generation. */
export const freshCallId = (): string => `call_${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** A tool call in the scripted model's answer. */
export function toolCall(name: string, args: Record<string, unknown>): ScriptedMessage {
  return { role: "assistant", content: null, tool_calls: [{ id: freshCallId(), type: "function", function: { name, arguments: JSON.stringify(args) } }] };
}

export function say(content: string): ScriptedMessage {
  return { role: "assistant", content };
}

/** The last tool result and the name of the call it answers, if the last message is a tool result. */
export function lastToolResult(body: ChatBody): { name: string; args: Record<string, unknown>; result: Record<string, unknown> } | null {
  const last = body.messages[body.messages.length - 1];
  if (last.role !== "tool") return null;
  for (let i = body.messages.length - 2; i >= 0; i--) {
    const calls = (body.messages[i].tool_calls ?? []) as Array<{ id: string; function: { name: string; arguments: string } }>;
    const call = calls.find((c) => c.id === last.tool_call_id);
    if (call)
      return {
        name: call.function.name,
        args: JSON.parse(call.function.arguments) as Record<string, unknown>,
        result: JSON.parse(String(last.content)) as Record<string, unknown>,
      };
  }
  return null;
}

/** The first user message's text. */
export function firstUser(body: ChatBody): string {
  return String(body.messages.find((m) => m.role === "user")?.content ?? "");
}

/** A small seeded PRNG (mulberry32), so that every run draws the same cases. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(rng: () => number, items: readonly T[]): T => items[Math.floor(rng() * items.length)];
export const between = (rng: () => number, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

export const FIRST = [
  "Ada",
  "Grace",
  "Alan",
  "Edsger",
  "Barbara",
  "Donald",
  "Margaret",
  "Ken",
  "Dennis",
  "Frances",
  "John",
  "Radia",
  "Leslie",
  "Tim",
  "Sophie",
  "Niklaus",
  "Hedy",
  "Claude",
  "Katherine",
  "Linus",
  "Anita",
  "Bjarne",
  "Shafi",
  "Guido",
  "Lynn",
  "Martin",
  "Carol",
  "Robin",
  "Jean",
  "Peter",
];
export const LAST = [
  "Lovelace",
  "Hopper",
  "Turing",
  "Dijkstra",
  "Liskov",
  "Knuth",
  "Hamilton",
  "Thompson",
  "Ritchie",
  "Allen",
  "Backus",
  "Perlman",
  "Lamport",
  "Berners",
  "Wilson",
  "Wirth",
  "Lamarr",
  "Shannon",
  "Johnson",
  "Torvalds",
  "Borg",
  "Stroustrup",
  "Goldwasser",
  "Rossum",
  "Conway",
  "Fowler",
  "Shaw",
  "Milner",
  "Sammet",
  "Naur",
];
