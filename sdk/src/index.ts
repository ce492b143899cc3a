export { Check, DEFAULT_THRESHOLD, judge, type CheckOptions, type CompareResult, type Verdict } from "./check.js";
export { UsageError } from "./errors.js";
export { Engine, type EngineOptions, type ToolOptions } from "./engine.js";
export { NotSerialisableError, type Json } from "./json.js";
export { MemoryStore } from "./store/memory-store.js";
export { RemoteStore, type RemoteStoreOptions } from "./store/remote-store.js";
export type {
  Agent,
  AgentContext,
  BranchOf,
  EngineWarning,
  ParallelStep,
  Params,
  ParamValue,
  RunArgs,
  RunOptions,
  RunReport,
  SkillKey,
  Step,
  StepArg,
  Trajectory,
  TrajectoryStep,
  TrajectoryStore,
} from "./types.js";
