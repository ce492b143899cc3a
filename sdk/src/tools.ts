import { AsyncLocalStorage } from "node:async_hooks";
import type { ErasedCheck } from "./check.js";
import { canonicalJson, encodeValue } from "./json.js";

/** A registered tool: the original (uninstrumented) function and its checks. */
export interface Tool {
  name: string;
  /** Stored with each step; a recording made with another version is not replayed. */
  version: string;
  fn: (this: unknown, ...args: unknown[]) => unknown;
  isMethod: boolean;
  /** For a method tool: its property name, its instrumented form, and the instance it replays on. */
  method?: { key: string | symbol; wrapper?: unknown; context?: object };
  pre?: ErasedCheck;
  post?: ErasedCheck;
}

/** One call observed while the agent runs. */
export interface RecordedCall {
  tool: Tool;
  /**
   * Which step of this run the call belongs to. A call made while another is still running joins that
   * call's step (a parallel step); a call made when none is running starts the next step.
   */
  step: number;
  args: unknown[];
  pre?: unknown;
  post?: unknown;
  result?: unknown;
  status: "running" | "ok" | "threw";
  /** Why the call cannot be stored even though it ran (a capture failed). */
  problem?: string;
  /** A programming error the engine throws once the agent returns (with the fix in the message). */
  misuse?: string;
  /** With an async pre-check capture: settles once the tool itself has been called. */
  invoked?: Promise<void>;
  /** The call repeats one that threw in the parallel step a replay left half done: it completes that step. */
  retried?: boolean;
}

/**
 * The step of calls that complete the parallel step a replay left half done: the agent's retries of its
 * calls that threw, and calls made while those still ran. The steps after it are numbered from 0.
 */
export const UNFINISHED_STEP = -1;

/** A call the engine replayed before it handed over to the agent. */
export interface ReplayedCall {
  /** The index of its step in the trajectory replayed: the calls of a parallel step share it. */
  step: number;
  tool: string;
  args: unknown[];
  result: unknown;
  /** Whether the tool returned a promise; a repeated call then gets one too. */
  async: boolean;
  /** The check captures this replay observed for the step. */
  pre?: unknown;
  post?: unknown;
  /**
   * The call threw during the replay while the other calls of its parallel step succeeded: the agent's
   * call that repeats it runs again (it is not answered from the replay) and completes that step.
   */
  retry?: boolean;
}

/**
 * The calls of one agent run, in the order they were made. After a partial
 * replay the agent starts over: its first calls, as long as they repeat the
 * replayed steps in order, answer with the replayed results instead of running
 * again, and are not recorded (they are already in the stored prefix).
 */
export class Recording {
  readonly calls: RecordedCall[] = [];
  /** Why this run must not be stored, whatever its calls; the first reason wins. */
  problem?: string;
  /** How many replayed steps the agent's calls have repeated so far. */
  repeated = 0;
  /** False once a call differed from the replayed step it should have repeated. */
  absorbing = true;

  constructor(readonly replayed: readonly ReplayedCall[] = []) {}

  refuse(reason: string): void {
    this.problem ??= reason;
  }

  /** True when the agent repeated every replayed step before doing anything else. */
  get caughtUp(): boolean {
    return this.repeated === this.replayed.length;
  }
}

function argsText(args: readonly unknown[]): string | undefined {
  try {
    return canonicalJson(encodeValue(args));
  } catch {
    return undefined;
  }
}

/**
 * Answers a call that repeats the next replayed call, or says it must run again (it threw in the replay);
 * undefined when it repeats none.
 */
function repeat(recording: Recording, tool: Tool, args: unknown[]): { value: unknown } | { retry: true } | undefined {
  if (!recording.absorbing || recording.caughtUp) return undefined;
  const expected = recording.replayed[recording.repeated];
  const text = argsText(args);
  if (expected.tool === tool.name && text !== undefined && text === argsText(expected.args)) {
    recording.repeated++;
    if (expected.retry) return { retry: true };
    return { value: expected.async ? Promise.resolve(expected.result) : expected.result };
  }
  recording.absorbing = false;
  recording.refuse(
    `the agent's call ${recording.repeated + 1} (${tool.name}) differs from the step the engine had already replayed ` +
      `(${expected.tool}); the replayed steps ran, so this run cannot be stored as one trajectory`,
  );
  return undefined;
}

/** Which recording (if any) the current async context belongs to. */
export interface Frame {
  recording: Recording;
  /** True inside an instrumented call: tools that tools call are not recorded. */
  nested: boolean;
}

export type Scope = AsyncLocalStorage<Frame>;

/**
 * The recording of the agent run the current code belongs to, across every
 * engine: an engine called there is a sub-task that a hit of the outer engine
 * would skip. Tool bodies run outside it: an engine inside a tool is part of
 * that tool's recorded step and runs again whenever the step is replayed.
 */
export const agentRun = new AsyncLocalStorage<Recording>();

export function newScope(): Scope {
  return new AsyncLocalStorage<Frame>();
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/** Runs `next` on a value that may or may not be a promise, staying synchronous when it is not. */
export function chain<T, U>(value: T | PromiseLike<T>, next: (value: T) => U): U | Promise<Awaited<U>> {
  return isThenable(value) ? (Promise.resolve(value).then(next) as Promise<Awaited<U>>) : next(value as T);
}

/** Runs a capture, turning a throw or rejection into a recorded problem. */
function capture(call: RecordedCall, check: ErasedCheck | undefined, self: unknown, which: "pre" | "post"): unknown {
  if (!check) return undefined;
  const fail = (error: unknown) => {
    call.problem ??= `${which}-check capture of ${call.tool.name} failed: ${String(error)}`;
    return undefined;
  };
  try {
    const value = check.capture(self, call.args);
    return isThenable(value) ? Promise.resolve(value).then((v) => v, fail) : value;
  } catch (error) {
    return fail(error);
  }
}

function lateSyncTool(tool: Tool, which: "pre" | "post"): string {
  return (
    `muscle-mem: tool ${tool.name} is synchronous but its ${which}-check capture is async, so the tool's caller got a ` +
    "Promise instead of its result" +
    (which === "pre" ? " and the tool ran late" : "") +
    ". Make the capture synchronous, or make the tool async"
  );
}

function runCall(call: RecordedCall, self: unknown): unknown {
  const { tool, args } = call;
  const pre = capture(call, tool.pre, self, "pre");
  let invoked: (() => void) | undefined;
  if (isThenable(pre)) call.invoked = new Promise<void>((resolve) => (invoked = resolve));
  return chain(pre, (preValue) => {
    call.pre = preValue;
    let out: unknown;
    try {
      out = tool.fn.apply(self, args);
    } finally {
      invoked?.();
    }
    const sync = !isThenable(out);
    if (sync && invoked) call.misuse ??= lateSyncTool(tool, "pre");
    return chain(out, (result) => {
      call.result = result;
      const post = capture(call, tool.post, self, "post");
      if (sync && isThenable(post)) call.misuse ??= lateSyncTool(tool, "post");
      return chain(post, (postValue) => {
        call.post = postValue;
        call.status = "ok";
        return result;
      });
    });
  });
}

/**
 * The step a new call belongs to: the current one while any of its calls is still running (the agent
 * runs tools at the same time, as with Promise.all), else the next one. Only the latest step can have
 * running calls, since a step ends when none of its calls runs.
 */
function stepFor(recording: Recording): number {
  const last = recording.calls.at(-1);
  // (after the unfinished step, UNFINISHED_STEP + 1 is step 0)
  if (last === undefined) return 0;
  return recording.calls.some((c) => c.status === "running") ? last.step : last.step + 1;
}

/**
 * Wraps a tool so that calls made during an engine run are recorded with
 * their check captures. Outside a run, and inside another tool, the wrapper
 * calls straight through. A synchronous tool stays synchronous as long as its
 * captures are synchronous.
 */
export function instrument(tool: Tool, scope: Scope): (this: unknown, ...args: unknown[]) => unknown {
  return function instrumented(this: unknown, ...args: unknown[]): unknown {
    const frame = scope.getStore();
    if (!frame || frame.nested) return tool.fn.apply(this, args);
    if (tool.method && this !== tool.method.context) {
      frame.recording.refuse(
        `method ${tool.name} was called on an instance that is not its context (engine.setContext); a replay would call it on the context instead`,
      );
    }
    const repeated = repeat(frame.recording, tool, args);
    if (repeated && "value" in repeated) return repeated.value;
    const call: RecordedCall = { tool, step: repeated ? UNFINISHED_STEP : stepFor(frame.recording), args: [...args], status: "running" };
    if (repeated) call.retried = true;
    frame.recording.calls.push(call);
    const threw = (error: unknown): never => {
      call.status = "threw";
      throw error;
    };
    const body = () => {
      try {
        const out = runCall(call, this);
        return isThenable(out) ? Promise.resolve(out).then((v) => v, threw) : out;
      } catch (error) {
        return threw(error);
      }
    };
    return scope.run({ recording: frame.recording, nested: true }, () => agentRun.exit(body));
  };
}
