import type { Json } from "./json.js";

/**
 * One recorded argument: its value, and the run param it was equal to when
 * recorded, if any. That param is only a candidate: it replaces the value on a
 * replay once two recordings with different values prove the binding.
 */
export interface StepArg {
  value: Json;
  param?: string;
}

/** One tool call in a trajectory, as stored: a step of its own, or one call of a {@link ParallelStep}. */
export interface Step {
  /** The registered tool name. */
  tool: string;
  /** The tool's version when recorded: its `version` option, else a hash of its source. */
  version?: string;
  args: StepArg[];
  /** The pre-check capture taken just before the call, when the tool has a pre-check. */
  pre?: Json;
  /** The post-check capture taken just after the call, when the tool has a post-check. */
  post?: Json;
  /** The tool's return value, when it is serialisable. Informational only. */
  result?: Json;
}

/**
 * Tool calls that overlapped in time (an agent's `Promise.all`): one step of two or more calls, in the
 * order they were made. A replay evaluates the pre-checks of every call before it starts any, then
 * starts them all in that order without waiting for one to finish before the next.
 */
export interface ParallelStep {
  parallel: Step[];
}

/** A step of a trajectory: one tool call, or calls that ran at the same time. */
export type TrajectoryStep = Step | ParallelStep;

/**
 * What a recording is filed under. With tags, runs that share the same set of
 * tags share skills; without tags, runs share skills when their task text is
 * the same once the run's parameter values are replaced by `{{name}}`.
 */
export type SkillKey = { tags: string[] } | { task: string };

/** Where a branch left the trajectory it was replaying. */
export interface BranchOf {
  id: string;
  /** The number of leading steps the branch shares with that trajectory. */
  at: number;
}

export interface Trajectory {
  id: string;
  key: SkillKey;
  task: string;
  steps: TrajectoryStep[];
  /** Milliseconds since the epoch. */
  recordedAt: number;
  branchOf?: BranchOf;
}

/** Persistence for trajectories. Both methods may reject; the engine fails open. */
export interface TrajectoryStore {
  /** All trajectories recorded under `key`, in any order. */
  query(key: SkillKey): Promise<Trajectory[]>;
  add(trajectory: Trajectory): Promise<void>;
}

/** A value a run param may take: data that can be stored, compared and templated. */
export type ParamValue = string | number | boolean | null | undefined | readonly ParamValue[] | { readonly [key: string]: ParamValue };

/** A run's params. Type them with `new Engine<{ qty: number }>()`; the agent then receives them typed. */
export type Params = { readonly [name: string]: ParamValue };

export type RunOptions<P extends Params = Params> = { tags?: string[] } & ({} extends P ? { params?: P } : { params: P });

/** The options argument of an engine call: required when the engine's params have required names. */
export type RunArgs<P extends Params> = {} extends P ? [options?: RunOptions<P>] : [options: RunOptions<P>];

/**
 * What the agent receives besides the task. After a partial replay the agent
 * starts over as usual: its calls that repeat the steps already replayed are
 * answered with the replayed results instead of running twice.
 */
export interface AgentContext<P extends Params = Params> {
  params: P;
  tags: string[];
}

export type Agent<P extends Params = Params> = (task: string, context: AgentContext<P>) => unknown;

/** What one engine call did. */
export interface RunReport {
  hit: boolean;
  /** Tool calls replayed from the cache in this call (a parallel step counts each of its calls). */
  replayed: number;
  /** Tool calls the agent ran in this call. */
  recorded: number;
  /** Whether a trajectory was written to the store. */
  stored: boolean;
  /** The id of the trajectory written, when one was. */
  trajectoryId?: string;
  /** Why nothing was stored, or why the replay stopped. */
  reason?: string;
  branchOf?: BranchOf;
}

/** Problems the engine survives, reported instead of thrown. */
export interface EngineWarning {
  kind: "store-query" | "store-add" | "not-storable" | "check-error" | "tool-error" | "tool-changed";
  message: string;
  error?: unknown;
}
