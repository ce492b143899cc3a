import { createHash, randomUUID } from "node:crypto";
import { eraseCheck } from "./check.js";
import { UsageError } from "./errors.js";
import { missSteps, replayedSteps } from "./record.js";
import { replay } from "./replay.js";
import { skillKey } from "./steps.js";
import { MemoryStore } from "./store/memory-store.js";
import type { Compatible, ToolOptions } from "./tool-options.js";
import { agentRun, instrument, newScope, Recording, type Scope, type Tool } from "./tools.js";
import type { Agent, Params, RunArgs, EngineWarning, RunOptions, RunReport, Trajectory, TrajectoryStep, TrajectoryStore } from "./types.js";

export type { ToolOptions } from "./tool-options.js";

export interface EngineOptions {
  /** Where trajectories live. Default: a new {@link MemoryStore}. */
  store?: TrajectoryStore;
  /** Problems the engine survives (an unreachable store, a capture that throws). Default: console.warn. */
  onWarning?: (warning: EngineWarning) => void;
  /**
   * What a hit does with the snapshots it observed. `"keep"` (default): nothing is
   * stored, so a recording ages from when it was recorded (a time-window check
   * expires). `"refresh"`: the hit is stored as a new recording with this run's
   * snapshots, as the original did, so the window slides with each hit; storage
   * then grows with hits.
   */
  onHit?: "keep" | "refresh";
}

// Merged with the class below: an engine is called like the agent it wraps.
export interface Engine<P extends Params = Params> {
  /** Runs a task: replays a recorded trajectory when one matches, else calls the agent. Resolves to "was it a cache hit". */
  (task: string, ...options: RunArgs<P>): Promise<boolean>;
}

/**
 * Wraps an agent with a behaviour cache. Instrument the agent's tools with
 * {@link Engine.function} and {@link Engine.method}; then call the engine
 * instead of the agent.
 *
 * @example
 * const engine = new Engine();
 * const hello = engine.function({ name: "hello" }, (name: string) => console.log(`hello ${name}`));
 * engine.setAgent((task) => hello(task)).finalize();
 * await engine("erik"); // false: the agent ran and was recorded
 * await engine("erik"); // true: replayed without the agent
 */
export class Engine<P extends Params = Params> {
  // Declared, not initialised: the constructor returns a callable, and these live on it.
  declare private readonly store: TrajectoryStore;
  declare private readonly warn: (warning: EngineWarning) => void;
  declare private readonly tools: Map<string, Tool>;
  declare private readonly scope: Scope;
  declare private agent: Agent<P> | undefined;
  declare private readonly onHit: "keep" | "refresh";
  declare private finalized: boolean;

  constructor(options: EngineOptions = {}) {
    const callable = ((task: string, ...runOptions: RunArgs<P>) => callable.run(task, ...runOptions).then((report) => report.hit)) as Engine<P>;
    Object.setPrototypeOf(callable, new.target.prototype);
    Object.assign(callable, {
      store: options.store ?? new MemoryStore(),
      warn: options.onWarning ?? ((w: EngineWarning) => console.warn(`muscle-mem: ${w.message}`, w.error ?? "")),
      tools: new Map<string, Tool>(),
      onHit: options.onHit ?? "keep",
      scope: newScope(),
      agent: undefined,
      finalized: false,
    });
    return callable;
  }

  /** The agent to call when no recorded trajectory fits. */
  setAgent(agent: Agent<P>): this {
    this.assertOpen("set the agent");
    this.agent = agent;
    return this;
  }

  /**
   * The instance that replayed method tools of its class are called on (their
   * `this`). Call it once per class that has method tools; two instances of
   * one class cannot both be contexts.
   */
  setContext(instance: object): this {
    this.assertOpen("set the context");
    const methods = [...this.tools.values()].filter((t) => t.method && (instance as Record<string | symbol, unknown>)[t.method.key] === t.method.wrapper);
    if (methods.length === 0) throw new Error("muscle-mem: setContext(instance): the instance has no @engine.method tools of this engine");
    for (const { name, method } of methods) {
      if (method?.context !== undefined && method.context !== instance) {
        throw new Error(
          `muscle-mem: method tool ${name} already replays on another instance. Methods are bound per class: ` +
            "record with one instance per class, or give the other instance its own Engine",
        );
      }
    }
    for (const { method } of methods) if (method) method.context = instance;
    return this;
  }

  /** Checks that the engine has an agent, tools, and a context if it has method tools. */
  finalize(): this {
    if (this.finalized) return this;
    if (this.tools.size === 0) throw new Error("muscle-mem: register a tool with engine.function() or @engine.method() first");
    if (!this.agent) throw new Error("muscle-mem: set an agent with engine.setAgent(agent) first");
    const unbound = [...this.tools.values()].filter((t) => t.method && t.method.context === undefined).map((t) => t.name);
    if (unbound.length > 0) {
      throw new Error(`muscle-mem: method tools need an instance to replay on: engine.setContext(instance) (missing for ${unbound.join(", ")})`);
    }
    this.finalized = true;
    return this;
  }

  /**
   * Instruments a function tool. The result behaves like `fn`; calls made during
   * an engine run are recorded.
   *
   * @example const click = engine.function({ name: "click", preCheck }, (x: number, y: number) => screen.click(x, y));
   */
  function<B extends unknown[], R, A extends unknown[] = B, P = unknown, Q = unknown>(
    options: ToolOptions<A, unknown, P, Q> & { name: string } & Compatible<A, B>,
    fn: (...args: B) => R,
  ): (...args: B) => R {
    if (typeof options.name !== "string" || options.name === "") {
      throw new Error(
        `muscle-mem: engine.function needs { name } (got a function named "${fn.name}"): the name is how recordings find ` +
          "the tool in other processes, and minifiers rename functions",
      );
    }
    const tool = this.register(options, fn as Tool["fn"], options.name, undefined);
    return instrument(tool, this.scope) as (...args: B) => R;
  }

  /**
   * A TC39 method decorator that instruments a method tool.
   *
   * @example class Client { @engine.method({ postCheck }) click(x: number, y: number) { … } }
   */
  method<A extends unknown[], This = unknown, P = unknown, Q = unknown>(options: ToolOptions<A, This, P, Q> = {}) {
    return <T extends This, B extends unknown[], R>(
      target: (this: T, ...args: B) => R,
      context: ClassMethodDecoratorContext<T, (this: T, ...args: B) => R> & Compatible<A, B>,
    ): ((this: T, ...args: B) => R) => {
      if (typeof context !== "object" || context === null || context.kind !== "method") {
        throw new Error(
          "muscle-mem: @engine.method was applied as a legacy decorator; it is a TC39 standard decorator. " +
            'Set "experimentalDecorators": false (or remove it) in tsconfig.json',
        );
      }
      if (context.private || context.static) throw new Error("muscle-mem: @engine.method needs a public instance method");
      const tool = this.register(options, target as Tool["fn"], options.name ?? String(context.name), context.name);
      const wrapper = instrument(tool, this.scope);
      if (tool.method) tool.method.wrapper = wrapper;
      return wrapper as (this: T, ...args: B) => R;
    };
  }

  /** Runs a task and reports what happened (the engine call itself resolves to `report.hit`). */
  async run(task: string, ...[options = {} as RunOptions<P>]: RunArgs<P>): Promise<RunReport> {
    const outer = this.scope.getStore()?.recording ?? agentRun.getStore();
    if (outer) {
      const whose = this.scope.getStore() ? "its own" : "another engine's";
      outer.refuse(`the agent called an engine inside ${whose} run`);
      throw new Error(
        `muscle-mem: the engine was called inside ${whose} run (a sub-task of the agent). The outer recording would miss ` +
          "the sub-task's steps, so neither is recorded: call the sub-task's tools from the agent directly, or run the " +
          "sub-task inside a tool of the outer engine (the tool is then the recorded step).",
      );
    }
    this.finalize();
    const tags = options.tags ?? [];
    const params: Params = options.params ?? {};
    const key = skillKey(task, tags, params);

    const candidates = await this.store.query(key).catch((error: unknown) => {
      if (error instanceof UsageError) throw error; // a misconfigured store is a bug to fix, not an outage
      this.warn({ kind: "store-query", message: "could not read trajectories; running the agent", error });
      return [] as Trajectory[];
    });
    const outcome = await replay(candidates, { tools: this.tools, params, warn: this.warn });
    if (outcome.kind === "hit") {
      const report: RunReport = { hit: true, replayed: outcome.done.length, recorded: 0, stored: false };
      if (this.onHit === "keep") return report;
      // Refresh: store what this replay observed, so time-window checks slide forward as in the original.
      return this.save(report, { key, task, branchOf: undefined }, () => replayedSteps(this.tools, outcome.done, params));
    }

    const recording = new Recording(outcome.done);
    const agent = this.agent as Agent<P>;
    await this.scope.run({ recording, nested: false }, () =>
      agentRun.run(recording, async () => {
        await agent(task, { params: params as P, tags });
      }),
    );
    await Promise.all(recording.calls.map((call) => call.invoked));
    const misuse = recording.calls.find((call) => call.misuse)?.misuse;
    if (misuse) throw new UsageError(misuse);
    if (recording.absorbing && !recording.caughtUp) {
      recording.refuse(`the agent returned before repeating the ${outcome.done.length} step(s) the engine had already replayed`);
    }

    const report: RunReport = {
      hit: false,
      replayed: outcome.done.filter((d) => !d.retry).length,
      recorded: recording.calls.length,
      stored: false,
      reason: outcome.reason,
      branchOf: outcome.branchOf,
    };
    if (recording.problem) return this.notStored(report, recording.problem);
    return this.save(report, { key, task, branchOf: outcome.branchOf }, () => missSteps(this.tools, outcome, recording.calls, params));
  }

  /** Builds the steps to store (which may throw: not storable) and stores them as a trajectory. */
  private async save(report: RunReport, meta: Pick<Trajectory, "key" | "task" | "branchOf">, build: () => TrajectoryStep[]): Promise<RunReport> {
    let steps: TrajectoryStep[];
    try {
      steps = build();
    } catch (error) {
      if (error instanceof UsageError) throw error;
      return this.notStored(report, error instanceof Error ? error.message : String(error), error);
    }
    if (steps.length === 0) return { ...report, reason: "the agent called no tools; nothing to store" };
    const trajectory: Trajectory = { id: randomUUID(), ...meta, steps, recordedAt: Date.now() };
    if (!meta.branchOf) delete trajectory.branchOf;
    try {
      await this.store.add(trajectory);
      return { ...report, stored: true, trajectoryId: trajectory.id };
    } catch (error) {
      if (error instanceof UsageError) throw error;
      this.warn({ kind: "store-add", message: "could not store the trajectory", error });
      return { ...report, reason: "store failed" };
    }
  }

  private notStored(report: RunReport, reason: string, error?: unknown): RunReport {
    this.warn({ kind: "not-storable", message: `run not stored: ${reason}`, error });
    return { ...report, reason };
  }

  private register<A extends unknown[], This, P, Q>(
    options: ToolOptions<A, This, P, Q>,
    fn: Tool["fn"],
    name: string,
    methodKey: string | symbol | undefined,
  ): Tool {
    this.assertOpen("register tools");
    if (this.tools.has(name)) throw new Error(`muscle-mem: a tool named "${name}" is already registered; pass another { name }`);
    // As the original identified tools by a hash of their code: new code retires old recordings.
    const version = options.version ?? `src:${createHash("sha256").update(fn.toString()).digest("hex").slice(0, 12)}`;
    const tool: Tool = {
      name,
      version,
      fn,
      isMethod: methodKey !== undefined,
      method: methodKey === undefined ? undefined : { key: methodKey },
      pre: options.preCheck && eraseCheck(options.preCheck),
      post: options.postCheck && eraseCheck(options.postCheck),
    };
    this.tools.set(name, tool);
    return tool;
  }

  private assertOpen(what: string): void {
    if (this.finalized) throw new Error(`muscle-mem: the engine is finalized; cannot ${what}`);
  }
}
