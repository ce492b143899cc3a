import type { Json } from "./json.js";

/** One recorded argument: a literal value, or a reference to a run parameter. */
export type StepArg = { value: Json } | { param: string };

/** One tool call in a trajectory, as stored. */
export interface Step {
  /** The registered tool name. */
  tool: string;
  args: StepArg[];
  /** The pre-check capture taken just before the call, when the tool has a pre-check. */
  pre?: Json;
  /** The post-check capture taken just after the call, when the tool has a post-check. */
  post?: Json;
  /** The tool's return value, when it is serialisable. Informational only. */
  result?: Json;
}

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
  steps: Step[];
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

export interface RunOptions {
  tags?: string[];
  params?: Record<string, unknown>;
}

/**
 * What the agent receives besides the task. After a partial replay the agent
 * starts over as usual: its calls that repeat the steps already replayed are
 * answered with the replayed results instead of running twice.
 */
export interface AgentContext {
  params: Record<string, unknown>;
  tags: string[];
}

export type Agent = (task: string, context: AgentContext) => unknown;

/** What one engine call did. */
export interface RunReport {
  hit: boolean;
  /** Steps replayed from the cache in this call. */
  replayed: number;
  /** Steps the agent ran in this call. */
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
  kind: "store-query" | "store-add" | "not-storable" | "check-error" | "tool-error";
  message: string;
  error?: unknown;
}
