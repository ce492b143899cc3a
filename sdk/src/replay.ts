import type { Verdict } from "./check.js";
import { decodeValue, type Json } from "./json.js";
import type { Observed } from "./record.js";
import { attempt, runStep, selfFor, type CallRun, type ReplayEnv, type Taken } from "./replay-step.js";
import { Binder, callsOf, encodeArgs } from "./steps.js";
import type { ReplayedCall, Tool } from "./tools.js";
import type { BranchOf, StepArg, Trajectory, TrajectoryStep } from "./types.js";

/**
 * A hit ran a whole trajectory. A miss hands over after `done` (possibly
 * none): `prefix` is the stored form of the steps that matched, and `diverged`
 * the calls of the step that ran but did not match, if that is why the replay stopped.
 */
export type ReplayOutcome =
  | { kind: "hit"; done: ReplayedCall[] }
  | {
      kind: "miss";
      done: ReplayedCall[];
      prefix: TrajectoryStep[];
      diverged?: Observed[];
      /**
       * A parallel step in which some calls threw: it follows the prefix, and its calls are the last of
       * `done`, those that threw marked `retry` for the agent to run again.
       */
      unfinished?: boolean;
      branchOf?: BranchOf;
      reason: string;
    };

interface Option {
  trajectory: Trajectory;
  verdict: Verdict;
  /** The pre-check capture taken for each call of this option's step, in order. */
  current: unknown[];
}

const newestFirst = (a: Trajectory, b: Trajectory) => b.recordedAt - a.recordedAt;

/** Whether a recorded call's tool is registered with the version it was recorded with; warns once per changed tool. */
function knownTool(env: ReplayEnv, name: string, version: string | undefined, changed: Set<string>): boolean {
  const tool = env.tools.get(name);
  if (!tool) return false;
  if (version === tool.version) return true;
  if (!changed.has(tool.name)) {
    changed.add(tool.name);
    env.warn({
      kind: "tool-changed",
      message:
        `a recording of tool ${tool.name} was made with version ${version ?? "(none)"}, this one is version ${tool.version}; ` +
        "it is not replayed. Pass { version } to the tool to keep recordings across edits and builds",
    });
  }
  return false;
}

/** Trajectories this engine can replay: non-empty, known tools, every param present. */
function usable(t: Trajectory, env: ReplayEnv, bind: Binder, changed: Set<string>): boolean {
  if (t.steps.length === 0) return false;
  return t.steps.every((step, i) => {
    const calls = callsOf(step);
    return calls.length > 0 && calls.every((c) => knownTool(env, c.tool, c.version, changed)) && bind.bindable(t.steps, i);
  });
}

/** The stored form of the arguments a replayed call was made with (the recorded form if they cannot be stored). */
function storedArgs(args: unknown[], env: ReplayEnv, recorded: StepArg[]): StepArg[] {
  try {
    return encodeArgs(args, env.params);
  } catch {
    return recorded;
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

/**
 * Evaluates the pre-check of every call of a candidate's step `idx` against the current environment.
 * It passes when every call passes; its score is the lowest of its calls'.
 */
async function checkStep(env: ReplayEnv, bind: Binder, trajectory: Trajectory, idx: number, memo: Map<string, Promise<Taken>>): Promise<Option | undefined> {
  const current: unknown[] = [];
  let score = 1;
  for (const [k, call] of callsOf(trajectory.steps[idx]).entries()) {
    const tool = env.tools.get(call.tool) as Tool;
    let value: unknown;
    if (tool.pre) {
      const check = tool.pre;
      const args = bind.args(trajectory.steps, idx, k) as unknown[];
      const identity = bind.callIdentity(trajectory.steps, idx, k);
      if (!memo.has(identity))
        memo.set(
          identity,
          attempt(env, tool, "pre", () => check.capture(selfFor(tool), args)),
        );
      const taken = (await memo.get(identity)) as Taken;
      if (!taken.ok) return undefined;
      value = taken.value;
    }
    const verdict = compare(env, tool, "pre", value, call.pre);
    if (!verdict.pass) return undefined;
    score = Math.min(score, verdict.score);
    current.push(value);
  }
  return { trajectory, verdict: { pass: true, score }, current };
}

/** Evaluates the pre-checks of each candidate's next step, all before the step starts. */
async function preCheck(env: ReplayEnv, bind: Binder, candidates: Trajectory[], idx: number): Promise<Option[]> {
  // One capture per distinct call: the environment does not change while the candidates are compared.
  const memo = new Map<string, Promise<Taken>>();
  const options: Option[] = [];
  for (const trajectory of candidates) {
    const option = await checkStep(env, bind, trajectory, idx, memo);
    if (option) options.push(option);
  }
  return options;
}

/** Whether every call of a trajectory's step `idx` passes its post-check against what the replay observed. */
function postPasses(env: ReplayEnv, runs: readonly CallRun[], step: TrajectoryStep): boolean {
  return callsOf(step).every((call, k) => {
    const { tool, post } = runs[k];
    if (!tool.post) return true;
    return post !== undefined && post.ok && compare(env, tool, "post", post.value, call.post).pass;
  });
}

/**
 * Replays the best matching trajectory step by step. Before each step, the
 * pre-checks of all remaining candidates are evaluated against the current
 * environment (for a parallel step, those of all its calls, before any starts);
 * candidates that fail drop out. After each step, the post-checks prune the
 * candidates that made the same calls. When nothing is left, the replay stops
 * and reports the steps already done, so that the agent can continue from
 * there instead of starting over.
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
        reason: `pre-check failed at step ${idx} (${names(parent.steps[idx])})`,
      };
    }

    // Best score first; the list is newest first, and sort is stable.
    options.sort((a, b) => b.verdict.score - a.verdict.score);
    const [chosen] = options;
    const best = chosen.trajectory;
    const step = best.steps[idx];
    const identity = bind.identity(best.steps, idx);
    const group = options.filter((o) => bind.identity(o.trajectory.steps, idx) === identity);

    const calls = callsOf(step).map((c, k) => ({ tool: env.tools.get(c.tool) as Tool, args: bind.args(best.steps, idx, k) as unknown[] }));
    const runs = await runStep(env, calls);
    const failed = runs.find((r) => r.threw);
    if (failed?.threw) {
      const { error } = failed.threw;
      env.warn({ kind: "tool-error", message: `replayed tool ${failed.tool.name} threw at step ${idx}; the agent takes over`, error });
      // A step of one call that threw may have half happened: the agent takes over from it, as for a failed check.
      // In a parallel step the calls that succeeded are done, and the agent runs again only those that threw.
      const unfinished = runs.length > 1;
      if (unfinished) done.push(...runs.map((r, k) => replayedCall(idx, r, chosen.current[k])));
      return {
        kind: "miss",
        done,
        prefix: best.steps.slice(0, idx),
        unfinished,
        branchOf: idx > 0 ? { id: best.id, at: idx } : undefined,
        reason: `replayed tool ${failed.tool.name} threw at step ${idx}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    done.push(...runs.map((r, k) => replayedCall(idx, r, chosen.current[k])));

    const survivors = group.map((o) => o.trajectory).filter((t) => postPasses(env, runs, t.steps[idx]));
    if (survivors.length === 0) {
      const recorded = callsOf(step);
      return {
        kind: "miss",
        done,
        prefix: best.steps.slice(0, idx),
        // The step ran but its outcome differs: the branch keeps it, with what was observed this time.
        diverged: runs.map((r, k) => ({
          tool: r.tool.name,
          args: storedArgs(r.args, env, recorded[k].args),
          pre: chosen.current[k],
          post: r.post?.ok ? r.post.value : undefined,
          result: r.result,
        })),
        branchOf: { id: best.id, at: idx },
        reason: `post-check failed at step ${idx} (${names(step)})`,
      };
    }
    live = survivors;
  }
}

/** What the agent's repeat of a replayed call is answered with; a call that threw is marked for the agent to run again. */
function replayedCall(step: number, run: CallRun, pre: unknown): ReplayedCall {
  const entry: ReplayedCall = { step, tool: run.tool.name, args: run.args, result: run.result, async: run.async, pre };
  if (run.post?.ok) entry.post = run.post.value;
  if (run.threw) entry.retry = true;
  return entry;
}

/** A step's tools for a message: one name, or the names of a parallel step's calls joined by " + ". */
function names(step: TrajectoryStep): string {
  return callsOf(step)
    .map((c) => c.tool)
    .join(" + ");
}
