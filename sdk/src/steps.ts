import { canonicalJson, decodeValue, encodeValue, type Json } from "./json.js";
import type { SkillKey, Step, StepArg, Trajectory, TrajectoryStep } from "./types.js";

/** The calls of a step, in the order they were made: one, or the calls of a parallel step. */
export function callsOf(step: TrajectoryStep): readonly Step[] {
  return "parallel" in step ? step.parallel : [step];
}

/** A step from the calls that made it: one call is a step of its own, more are a parallel step. */
export function stepOf(calls: Step[]): TrajectoryStep {
  return calls.length === 1 ? calls[0] : { parallel: calls };
}

/**
 * Params worth recognising in tool arguments. Booleans, null, undefined and the
 * empty string are left out: they are low-cardinality values that steer
 * behaviour, so a `true` argument must stay a literal even when some param is
 * `true` too.
 */
function paramIndex(params: Record<string, unknown>): Map<string, string> {
  const index = new Map<string, string>();
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (value === null || value === undefined || value === "" || typeof value === "boolean") continue;
    let encoded: Json;
    try {
      encoded = encodeValue(value);
    } catch {
      continue; // a param that cannot be stored cannot be recognised either
    }
    const canonical = canonicalJson(encoded);
    if (!index.has(canonical)) index.set(canonical, key);
  }
  return index;
}

/**
 * Encodes a call's arguments for storage. An argument equal (deeply) to a run
 * param keeps its value and notes the param as a *candidate* binding: it is
 * replayed with another value only once two recordings prove it (see
 * {@link Binder}). Throws NotSerialisableError for arguments that cannot be stored.
 */
export function encodeArgs(args: readonly unknown[], params: Record<string, unknown>): StepArg[] {
  const index = paramIndex(params);
  return args.map((arg, i) => {
    const value = encodeValue(arg, `args[${i}]`);
    const param = index.get(canonicalJson(value));
    return param === undefined ? { value } : { value, param };
  });
}

function encodedOrUndefined(value: unknown): string | undefined {
  try {
    return canonicalJson(encodeValue(value));
  } catch {
    return undefined;
  }
}

/**
 * Decides which recorded arguments follow a run param. A candidate binding is
 * proven when two recordings of the skill, through the same tools up to that
 * step, had the argument equal to the param with different values: then it
 * is the param, not a literal that happened to be equal. An unproven candidate
 * replays only when the param has the recorded value again.
 */
export class Binder {
  private readonly proven = new Set<string>();

  constructor(
    trajectories: readonly Trajectory[],
    private readonly params: Record<string, unknown>,
  ) {
    const first = new Map<string, string>();
    for (const t of trajectories) {
      t.steps.forEach((step, i) => {
        callsOf(step).forEach((call, k) => {
          call.args.forEach((arg, j) => {
            if (arg.param === undefined) return;
            const slot = slotOf(t.steps, i, k, j, arg.param);
            const value = canonicalJson(arg.value);
            const seen = first.get(slot);
            if (seen === undefined) first.set(slot, value);
            else if (seen !== value) this.proven.add(slot);
          });
        });
      });
    }
  }

  /**
   * The live arguments of call `k` of step `idx` of `steps`, or undefined when they cannot be
   * replayed under these params.
   */
  args(steps: readonly TrajectoryStep[], idx: number, k = 0): unknown[] | undefined {
    const out: unknown[] = [];
    for (const [j, arg] of callsOf(steps[idx])[k].args.entries()) {
      if (arg.param === undefined) {
        out.push(decodeValue(arg.value));
        continue;
      }
      if (!Object.hasOwn(this.params, arg.param)) return undefined;
      const current = this.params[arg.param];
      if (encodedOrUndefined(current) === canonicalJson(arg.value)) out.push(decodeValue(arg.value));
      else if (this.proven.has(slotOf(steps, idx, k, j, arg.param))) out.push(current);
      else return undefined;
    }
    return out;
  }

  /** Whether every call of step `idx` can be replayed under these params. */
  bindable(steps: readonly TrajectoryStep[], idx: number): boolean {
    return callsOf(steps[idx]).every((_, k) => this.args(steps, idx, k) !== undefined);
  }

  /** Equal for two calls exactly when they would make the same call. */
  callIdentity(steps: readonly TrajectoryStep[], idx: number, k: number): string {
    const args = this.args(steps, idx, k);
    return `${callsOf(steps[idx])[k].tool}\u0000${args === undefined ? "?" : (encodedOrUndefined(args) ?? "?")}`;
  }

  /** Equal for two steps exactly when they would make the same calls, in the same order, the same way (alone or in parallel). */
  identity(steps: readonly TrajectoryStep[], idx: number): string {
    const calls = callsOf(steps[idx]).map((_, k) => this.callIdentity(steps, idx, k));
    return "parallel" in steps[idx] ? `parallel\u0001${calls.join("\u0001")}` : calls[0];
  }
}

/** The tools of a step: a name, or the names of a parallel step's calls. */
function toolsOf(step: TrajectoryStep): string | string[] {
  return "parallel" in step ? step.parallel.map((c) => c.tool) : step.tool;
}

function slotOf(steps: readonly TrajectoryStep[], idx: number, call: number, arg: number, param: string): string {
  return canonicalJson([steps.slice(0, idx + 1).map(toolsOf), call, arg, param]);
}

/**
 * The key a run's skills are filed under: its sorted tags, or, without tags, its
 * task text with each string or number param value replaced by `{{name}}` where
 * it stands as a whole token (not inside a longer word or number).
 *
 * @example skillKey("greet erik", [], { name: "erik" }) // { task: "greet {{name}}" }
 */
export function skillKey(task: string, tags: readonly string[], params: Record<string, unknown>): SkillKey {
  if (tags.length > 0) return { tags: [...new Set(tags)].sort() };
  const names = new Map<string, string>();
  const texts = Object.entries(params)
    .map(([name, value]): [string, string] | undefined => {
      if (typeof value === "string" && value.trim().length > 0) return [name, value];
      if (typeof value === "number" && Number.isFinite(value)) return [name, String(value)];
      return undefined;
    })
    .filter((entry): entry is [string, string] => entry !== undefined)
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  for (const [name, text] of texts) if (!names.has(text)) names.set(text, name);
  if (names.size === 0) return { task };
  // One pass, whole tokens only: "1" is not replaced inside "10", nor a value inside a placeholder.
  const alternatives = [...names.keys()].map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alternatives})(?![\\p{L}\\p{N}_])`, "gu");
  return { task: task.replace(pattern, (text) => `{{${names.get(text) as string}}}`) };
}

export function keyString(key: SkillKey): string {
  return canonicalJson("tags" in key ? { tags: key.tags } : { task: key.task });
}
