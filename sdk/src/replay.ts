import type { Verdict } from "./check.js";
import { decodeValue, type Json } from "./json.js";
import { Binder, encodeArgs } from "./steps.js";
import { isThenable, type ReplayedCall, type Tool } from "./tools.js";
import type { BranchOf, EngineWarning, Step, StepArg, Trajectory } from "./types.js";

export interface ReplayEnv {
  tools: ReadonlyMap<string, Tool>;
  params: Record<string, unknown>;
  warn(warning: EngineWarning): void;
}

/** A step that ran during the replay but whose post-check failed, with what was observed. */
export interface ObservedStep {
  tool: string;
  args: StepArg[];
  pre: unknown;
  post: unknown;
  result: unknown;
}

/**
 * A hit ran a whole trajectory. A miss hands over after `done` (possibly
 * none): `prefix` is the stored form of the steps that matched, and `diverged`
 * the step that ran but did not match, if that is why the replay stopped.
 */
export type ReplayOutcome =
  | { kind: "hit"; done: ReplayedCall[] }
  | {
      kind: "miss";
      done: ReplayedCall[];
      prefix: Step[];
      diverged?: ObservedStep;
      branchOf?: BranchOf;
      reason: string;
    };

interface Option {
  trajectory: Trajectory;
  verdict: Verdict;
  /** The pre-check capture taken for this option's call. */
  current: unknown;
}

const newestFirst = (a: Trajectory, b: Trajectory) => b.recordedAt - a.recordedAt;

/** Trajectories this engine can replay: non-empty, known tools, every param present. */
function usable(t: Trajectory, env: ReplayEnv, bind: Binder, changed: Set<string>): boolean {
  if (t.steps.length === 0) return false;
  return t.steps.every((s, i) => {
    const tool = env.tools.get(s.tool);
    if (!tool) return false;
    if (s.version !== tool.version) {
      if (!changed.has(tool.name)) {
        changed.add(tool.name);
        env.warn({
          kind: "tool-changed",
          message:
            `a recording of tool ${tool.name} was made with version ${s.version ?? "(none)"}, this one is version ${tool.version}; ` +
            "it is not replayed. Pass { version } to the tool to keep recordings across edits and builds",
        });
      }
      return false;
    }
    return bind.args(t.steps, i) !== undefined;
  });
}

function selfFor(tool: Tool, _env: ReplayEnv): unknown {
  return tool.method?.context;
}

/** The stored form of the arguments a replayed step was called with (the recorded form if they cannot be stored). */
function storedArgs(args: unknown[], env: ReplayEnv, recorded: StepArg[]): StepArg[] {
  try {
    return encodeArgs(args, env.params);
  } catch {
    return recorded;
  }
}

type Taken = { ok: true; value: unknown } | { ok: false };

/** Runs a capture; a throw or a rejection is reported and counts as a mismatch. */
async function attempt(env: ReplayEnv, tool: Tool, which: "pre" | "post", take: () => unknown): Promise<Taken> {
  try {
    return { ok: true, value: await take() };
  } catch (error) {
    env.warn({ kind: "check-error", message: `${which}-check capture of ${tool.name} threw`, error });
    return { ok: false };
  }
}

function compare(env: ReplayEnv, tool: Tool, which: "pre" | "post", current: unknown, stored: Json | undefined): Verdict {
  const check = which === "pre" ? tool.pre : tool.post;
  if (!check) return { pass: true, score: 1 };
  // The tool has a check but the recording has no capture for it: nothing to validate against.
  if (stored === undefined) return { pass: false, score: 0 };
  try {
    return check.verdict(current, decodeValue(stored));
  } catch (error) {
    env.warn({ kind: "check-error", message: `${which}-check compare of ${tool.name} threw`, error });
    return { pass: false, score: 0 };
  }
}

/** Evaluates the pre-check of each candidate's next step against the current environment. */
async function preCheck(env: ReplayEnv, bind: Binder, candidates: Trajectory[], idx: number): Promise<Option[]> {
  // One capture per distinct call: the environment does not change while the candidates are compared.
  const memo = new Map<string, Promise<Taken>>();
  const options: Option[] = [];
  for (const trajectory of candidates) {
    const step = trajectory.steps[idx];
    const tool = env.tools.get(step.tool) as Tool;
    let current: unknown;
    if (tool.pre) {
      const check = tool.pre;
      const args = bind.args(trajectory.steps, idx) as unknown[];
      const identity = bind.identity(trajectory.steps, idx);
      if (!memo.has(identity)) memo.set(identity, attempt(env, tool, "pre", () => check.capture(selfFor(tool, env), args)));
      const taken = (await memo.get(identity)) as Taken;
      if (!taken.ok) continue;
      current = taken.value;
    }
    const verdict = compare(env, tool, "pre", current, step.pre);
    if (verdict.pass) options.push({ trajectory, verdict, current });
  }
  return options;
}

/**
 * Replays the best matching trajectory step by step. Before each step, the
 * pre-checks of all remaining candidates are evaluated against the current
 * environment; candidates that fail drop out. After each step, the post-check
 * prunes the candidates that made the same call. When nothing is left, the
 * replay stops and reports the steps already done, so that the agent can
 * continue from there instead of starting over.
 */
export async function replay(all: Trajectory[], env: ReplayEnv): Promise<ReplayOutcome> {
  const bind = new Binder(all, env.params);
  const changed = new Set<string>();
  let live = all.filter((t) => usable(t, env, bind, changed)).sort(newestFirst);
  const done: ReplayedCall[] = [];
  if (live.length === 0) return { kind: "miss", done, prefix: [], reason: "no usable trajectory" };

  for (let idx = 0; ; idx++) {
    const continuing = live.filter((t) => t.steps.length > idx);
    const options = await preCheck(env, bind, continuing, idx);
    if (options.length === 0) {
      if (live.some((t) => t.steps.length === idx)) return { kind: "hit", done };
      const parent = continuing[0];
      return {
        kind: "miss",
        done,
        prefix: parent.steps.slice(0, idx),
        branchOf: idx > 0 ? { id: parent.id, at: idx } : undefined,
        reason: `pre-check failed at step ${idx} (${parent.steps[idx].tool})`,
      };
    }

    // Best score first; the list is newest first, and sort is stable.
    options.sort((a, b) => b.verdict.score - a.verdict.score);
    const best = options[0].trajectory;
    const step = best.steps[idx];
    const identity = bind.identity(best.steps, idx);
    const group = options.filter((o) => bind.identity(o.trajectory.steps, idx) === identity);

    const tool = env.tools.get(step.tool) as Tool;
    const args = bind.args(best.steps, idx) as unknown[];
    const self = selfFor(tool, env);
    let result: unknown;
    let async = false;
    try {
      const out = tool.fn.apply(self, args);
      async = isThenable(out);
      result = await out;
    } catch (error) {
      // The step may have half happened: hand over to the agent from here, as for a failed check.
      env.warn({ kind: "tool-error", message: `replayed tool ${tool.name} threw at step ${idx}; the agent takes over`, error });
      return {
        kind: "miss",
        done,
        prefix: best.steps.slice(0, idx),
        branchOf: idx > 0 ? { id: best.id, at: idx } : undefined,
        reason: `replayed tool ${tool.name} threw at step ${idx}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const entry: ReplayedCall = { tool: tool.name, args, result, async, pre: options[0].current };
    done.push(entry);

    let survivors = group.map((o) => o.trajectory);
    if (tool.post) {
      const check = tool.post;
      const taken = await attempt(env, tool, "post", () => check.capture(self, args));
      if (taken.ok) entry.post = taken.value;
      survivors = taken.ok
        ? survivors.filter((t) => compare(env, tool, "post", taken.value, t.steps[idx].post).pass)
        : [];
      if (survivors.length === 0) {
        return {
          kind: "miss",
          done,
          prefix: best.steps.slice(0, idx),
          // The step ran but its outcome differs: the branch keeps it, with what was observed this time.
          diverged: { tool: step.tool, args: storedArgs(args, env, step.args), pre: options[0].current, post: taken.ok ? taken.value : undefined, result },
          branchOf: { id: best.id, at: idx },
          reason: `post-check failed at step ${idx} (${step.tool})`,
        };
      }
    }
    live = survivors;
  }
}
