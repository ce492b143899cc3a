import { isThenable, type Tool } from "./tools.js";
import type { EngineWarning } from "./types.js";

export interface ReplayEnv {
  tools: ReadonlyMap<string, Tool>;
  params: Record<string, unknown>;
  warn(warning: EngineWarning): void;
}

/** A capture taken during a replay: its value, or not ok when it threw. */
export type Taken = { ok: true; value: unknown } | { ok: false };

/** The `this` a replayed tool is called on: its context instance for a method tool. */
export function selfFor(tool: Tool): unknown {
  return tool.method?.context;
}

/** Runs a capture; a throw or a rejection is reported and counts as a mismatch. */
export async function attempt(env: ReplayEnv, tool: Tool, which: "pre" | "post", take: () => unknown): Promise<Taken> {
  try {
    return { ok: true, value: await take() };
  } catch (error) {
    env.warn({ kind: "check-error", message: `${which}-check capture of ${tool.name} threw`, error });
    return { ok: false };
  }
}

/** How one call of a replayed step went. */
export interface CallRun {
  tool: Tool;
  args: unknown[];
  result?: unknown;
  /** Whether the tool returned a promise; a repeated call then gets one too. */
  async: boolean;
  /** The post-check capture, taken as soon as this call finished (when the tool has a post-check). */
  post?: Taken;
  /** Set when the tool threw or rejected. */
  threw?: { error: unknown };
}

/** Calls one tool, and takes its post-check capture as soon as it has finished. */
function startCall(env: ReplayEnv, tool: Tool, args: unknown[]): Promise<CallRun> {
  const self = selfFor(tool);
  let out: unknown;
  try {
    out = tool.fn.apply(self, args);
  } catch (error) {
    return Promise.resolve({ tool, args, async: false, threw: { error } });
  }
  const async = isThenable(out);
  const check = tool.post;
  return Promise.resolve(out).then(
    async (result): Promise<CallRun> => {
      const run: CallRun = { tool, args, result, async };
      if (check) run.post = await attempt(env, tool, "post", () => check.capture(self, args));
      return run;
    },
    (error: unknown): CallRun => ({ tool, args, async, threw: { error } }),
  );
}

/**
 * Runs the calls of one step as the agent made them: in order, each started without waiting for the
 * one before to finish (a step of one call is simply called). Settles once every call has, so a call
 * that throws never leaves another still running when the agent takes over.
 */
export function runStep(env: ReplayEnv, calls: readonly { tool: Tool; args: unknown[] }[]): Promise<CallRun[]> {
  return Promise.all(calls.map(({ tool, args }) => startCall(env, tool, args)));
}
