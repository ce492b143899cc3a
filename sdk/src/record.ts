import { UsageError } from "./errors.js";
import { encodeValue, NotSerialisableError, type Json } from "./json.js";
import { encodeArgs, stepOf } from "./steps.js";
import { UNFINISHED_STEP, type RecordedCall, type ReplayedCall, type Tool } from "./tools.js";
import type { Step, StepArg, TrajectoryStep } from "./types.js";

/** What a step looked like when it ran: its call, the check captures and the result. */
export interface Observed {
  tool: string;
  args: StepArg[];
  pre?: unknown;
  post?: unknown;
  result?: unknown;
}

/** The stored form of an observed step. Throws NotSerialisableError when a capture cannot be stored. */
export function toStep(tools: ReadonlyMap<string, Tool>, observed: Observed): Step {
  const tool = tools.get(observed.tool) as Tool;
  const step: Step = { tool: observed.tool, version: tool.version, args: observed.args };
  if (tool.pre) step.pre = encodeCapture(tool, "pre", observed.pre);
  if (tool.post) step.post = encodeCapture(tool, "post", observed.post);
  const result = tryEncode(observed.result);
  if (result !== undefined) step.result = result;
  return step;
}

/** The stored form of a call the agent made. Throws when it cannot be stored faithfully. */
export function recordStep(tools: ReadonlyMap<string, Tool>, call: RecordedCall, params: Record<string, unknown>): Step {
  if (call.status === "threw") throw new Error(`tool ${call.tool.name} threw`);
  if (call.status === "running") throw new Error(`tool ${call.tool.name} was still running when the agent returned`);
  if (call.problem) throw new Error(call.problem);
  const { pre, post, result } = call;
  return toStep(tools, { tool: call.tool.name, args: encodeArgs(call.args, params), pre, post, result });
}

/**
 * Steps from stored calls tagged with the step they belong to, in the order they were made: consecutive
 * calls of one step become one parallel step, a call alone a step of its own.
 */
export function groupSteps(calls: readonly { step: number; stored: Step }[]): TrajectoryStep[] {
  const groups: { step: number; calls: Step[] }[] = [];
  for (const { step, stored } of calls) {
    const last = groups.at(-1);
    if (last && last.step === step) last.calls.push(stored);
    else groups.push({ step, calls: [stored] });
  }
  return groups.map((g) => stepOf(g.calls));
}

/** The stored form of calls a replay made, as steps (a hit stored with onHit: "refresh"). */
export function replayedSteps(tools: ReadonlyMap<string, Tool>, done: readonly ReplayedCall[], params: Record<string, unknown>): TrajectoryStep[] {
  return groupSteps(done.map((d) => ({ step: d.step, stored: replayedStep(tools, d, params) })));
}

function replayedStep(tools: ReadonlyMap<string, Tool>, d: ReplayedCall, params: Record<string, unknown>): Step {
  return toStep(tools, { tool: d.tool, args: encodeArgs(d.args, params), pre: d.pre, post: d.post, result: d.result });
}

/** How a replay that missed ended, as far as what to store goes. */
export interface Handover {
  prefix: TrajectoryStep[];
  done: ReplayedCall[];
  diverged?: Observed[];
  unfinished?: boolean;
}

/**
 * What a miss stores: the steps the replay matched; then the step whose post-check differed, as observed,
 * or the parallel step the replay left unfinished, completed by the agent's retries of its calls that threw
 * (and any call made while those ran); then the agent's own steps.
 */
export function missSteps(
  tools: ReadonlyMap<string, Tool>,
  handover: Handover,
  calls: readonly RecordedCall[],
  params: Record<string, unknown>,
): TrajectoryStep[] {
  const steps = [...handover.prefix];
  if (handover.diverged) steps.push(stepOf(handover.diverged.map((observed) => toStep(tools, observed))));
  if (handover.unfinished) {
    const completing = calls.filter((c) => c.step === UNFINISHED_STEP);
    const retries = completing.filter((c) => c.retried);
    const replayed = handover.done.filter((d) => d.step === handover.prefix.length);
    const merged = replayed.map((d) => {
      if (!d.retry) return replayedStep(tools, d, params);
      const retry = retries.shift();
      if (!retry) throw new Error(`the agent did not run ${d.tool} again, which threw during the replay`);
      return recordStep(tools, retry, params);
    });
    const overlapping = completing.filter((c) => !c.retried).map((c) => recordStep(tools, c, params));
    steps.push(stepOf([...merged, ...overlapping]));
  }
  const own = calls.filter((c) => c.step !== UNFINISHED_STEP);
  return [...steps, ...groupSteps(own.map((call) => ({ step: call.step, stored: recordStep(tools, call, params) })))];
}

function encodeCapture(tool: Tool, which: "pre" | "post", value: unknown): Json {
  try {
    return encodeValue(value, `${which}-check capture`);
  } catch (error) {
    if (!(error instanceof NotSerialisableError)) throw error;
    throw new UsageError(
      `muscle-mem: the ${which}-check capture of ${tool.name} returned a value that cannot be stored (${error.message}). ` +
        "Captures must return plain data: return date.getTime() for a Date, and { ...snapshot } or an object literal for a " +
        "class instance (such as a ported @dataclass)",
    );
  }
}

function tryEncode(value: unknown): Json | undefined {
  if (value === undefined) return undefined;
  try {
    return encodeValue(value);
  } catch (error) {
    if (error instanceof NotSerialisableError) return undefined;
    throw error;
  }
}
