import { canonicalJson, isObject, tryParseJson, type Json } from "../json.js";
import { callsOf, keyString } from "../steps.js";
import type { BranchOf, SkillKey, Step, StepArg, Trajectory, TrajectoryStep } from "../types.js";

/**
 * How an SDK trajectory travels through the Worker's trajectory API: one line
 * of `shared/workloads` JSONL. The skill key is the user message, each step an
 * assistant message with its tool calls (arguments `{args}`; more than one for a
 * parallel step) followed by a tool message per call whose content holds the
 * check captures and result as JSON, and a final assistant
 * message marks the end. Steps are serialised canonically, so two trajectories
 * that share leading steps share those nodes in the Worker's tree: a branch.
 */
export interface WireLine {
  id: string;
  model: string;
  tools: null;
  messages: WireMessage[];
}

export type WireMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: null; tool_calls: WireToolCall[] }
  | { role: "assistant"; content: string }
  | { role: "tool"; tool_call_id: string; content: string };

interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export const MODEL_PREFIX = "muscle-mem-sdk/";

/** The frame model a skill's tree is stored under: one tree per skill key and namespace. */
export async function skillModel(key: SkillKey): Promise<string> {
  const bytes = new TextEncoder().encode(keyString(key));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return MODEL_PREFIX + hex;
}

function keyJson(key: SkillKey): Json {
  return "tags" in key ? { tags: key.tags } : { task: key.task };
}

function toolCall(step: Step, id: string): WireToolCall {
  // The Worker re-serialises tool-call arguments with sorted keys (that is its canonical form), so
  // the arguments travel as JSON text inside a string: their keys come back in the recorded order.
  const call: { [k: string]: Json } = { args_text: JSON.stringify(step.args) };
  if (step.version !== undefined) call.version = step.version;
  return { id, type: "function", function: { name: step.tool, arguments: canonicalJson(call) } };
}

function observedOf(step: Step): { [k: string]: Json } {
  const observed: { [k: string]: Json } = {};
  if (step.pre !== undefined) observed.pre = step.pre;
  if (step.post !== undefined) observed.post = step.post;
  if (step.result !== undefined) observed.result = step.result;
  return observed;
}

export function toLine(trajectory: Trajectory, model: string): WireLine {
  const messages: WireMessage[] = [{ role: "user", content: canonicalJson({ muscle_mem: "skill", key: keyJson(trajectory.key) }) }];
  trajectory.steps.forEach((step, i) => {
    const calls = callsOf(step);
    // A parallel step is one assistant message with a tool call per call, as a model's parallel tool calls are.
    const ids = calls.length === 1 && !("parallel" in step) ? [`call_${i}`] : calls.map((_, k) => `call_${i}_${k}`);
    messages.push({ role: "assistant", content: null, tool_calls: calls.map((call, k) => toolCall(call, ids[k])) });
    calls.forEach((call, k) => messages.push({ role: "tool", tool_call_id: ids[k], content: canonicalJson(observedOf(call)) }));
  });
  const end: { [k: string]: Json } = {
    muscle_mem: "end",
    id: trajectory.id,
    task: trajectory.task,
    recorded_at: trajectory.recordedAt,
  };
  if (trajectory.branchOf) end.branch_of = { id: trajectory.branchOf.id, at: trajectory.branchOf.at };
  messages.push({ role: "assistant", content: canonicalJson(end) });
  return { id: trajectory.id, model, tools: null, messages };
}

/** Text of a message content given as a string or as parts. */
function text(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.map((p: unknown) => (typeof p === "string" ? p : isObject(p) && typeof p.text === "string" ? p.text : undefined));
  return parts.every((p) => p !== undefined) ? parts.join("") : undefined;
}

function jsonOf(content: unknown): Json | undefined {
  const t = text(content);
  return t === undefined ? undefined : tryParseJson(t);
}

function parseKey(json: Json | undefined): SkillKey | undefined {
  if (!isObject(json) || json.muscle_mem !== "skill" || !isObject(json.key)) return undefined;
  const { tags, task } = json.key;
  if (Array.isArray(tags) && tags.every((t) => typeof t === "string")) return { tags: tags as string[] };
  if (typeof task === "string") return { task };
  return undefined;
}

function parseArgs(json: Json | undefined): StepArg[] | undefined {
  if (!isObject(json) || !Array.isArray(json.args)) return undefined;
  const args: StepArg[] = [];
  for (const a of json.args) {
    if (!isObject(a) || !("value" in a)) return undefined;
    if (typeof a.param === "string") args.push({ value: a.value, param: a.param });
    else args.push({ value: a.value });
  }
  return args;
}

/** One recorded call from its tool call and the tool message after it; undefined when either is not one. */
function parseCall(call: Json, result: { [k: string]: Json } | undefined): Step | undefined {
  if (!isObject(call) || result?.role !== "tool") return undefined;
  const fn = call.function;
  if (!isObject(fn) || typeof fn.name !== "string" || typeof fn.arguments !== "string") return undefined;
  const parsed = tryParseJson(fn.arguments);
  const args = isObject(parsed) && typeof parsed.args_text === "string" ? parseArgs({ args: tryParseJson(parsed.args_text) ?? null }) : undefined;
  const observed = jsonOf(result.content);
  if (!args || !isObject(observed)) return undefined;
  const step: Step = { tool: fn.name, args };
  if (isObject(parsed) && typeof parsed.version === "string") step.version = parsed.version;
  if ("pre" in observed) step.pre = observed.pre;
  if ("post" in observed) step.post = observed.post;
  if ("result" in observed) step.result = observed.result;
  return step;
}

/** Reads one exported line back; undefined for lines that are not SDK trajectories. */
export function fromLine(line: unknown): Trajectory | undefined {
  if (!isObject(line) || !Array.isArray(line.messages)) return undefined;
  const messages = line.messages.filter((m) => isObject(m) && m.role !== "system") as { [k: string]: Json }[];
  const key = parseKey(jsonOf(messages[0]?.content));
  const end = jsonOf(messages.at(-1)?.content);
  if (!key || !isObject(end) || end.muscle_mem !== "end" || messages.at(-1)?.role !== "assistant") return undefined;
  const steps: TrajectoryStep[] = [];
  for (let i = 1; i < messages.length - 1; ) {
    const calls = messages[i].tool_calls;
    if (!Array.isArray(calls) || calls.length === 0) return undefined;
    const results = messages.slice(i + 1, i + 1 + calls.length);
    // Each tool message answers its call by id; by position if the ids did not survive the round trip.
    const answer = (call: Json, k: number) => results.find((m) => isObject(call) && m.tool_call_id === call.id) ?? results[k];
    const parsed = calls.map((call, k) => parseCall(call, answer(call, k)));
    if (!parsed.every((p): p is Step => p !== undefined)) return undefined;
    steps.push(calls.length === 1 ? parsed[0] : { parallel: parsed });
    i += 1 + calls.length;
  }
  const branch = end.branch_of;
  const branchOf: BranchOf | undefined =
    isObject(branch) && typeof branch.id === "string" && typeof branch.at === "number" ? { id: branch.id, at: branch.at } : undefined;
  return {
    id: typeof end.id === "string" ? end.id : String(line.id),
    key,
    task: typeof end.task === "string" ? end.task : "",
    steps,
    recordedAt: typeof end.recorded_at === "number" ? end.recorded_at : 0,
    ...(branchOf ? { branchOf } : {}),
  };
}
