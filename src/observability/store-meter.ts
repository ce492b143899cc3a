import { shardNames } from "../store/shards/shards";
import type { LogLevel } from "./log";
import { logEvent, withLogContext } from "./log-event";
import { inRequestContext, requestContext } from "./request-context";
import { type D1Cost, newStoreCost, type StoreCost, zeroD1 } from "./store-cost";

export type { D1Cost, StoreCost };
export { newStoreCost };

/** The billed rows of one D1 result (`run`, `all`) or of a batch's results; 0 for anything without `meta` (`exec`). */
export function billedRows(result: unknown): { read: number; written: number } {
  const out = { read: 0, written: 0 };
  for (const r of Array.isArray(result) ? result : [result]) {
    const meta = (r as { meta?: { rows_read?: unknown; rows_written?: unknown } } | null)?.meta;
    if (!meta) continue;
    if (typeof meta.rows_read === "number") out.read += meta.rows_read;
    if (typeof meta.rows_written === "number") out.written += meta.rows_written;
  }
  return out;
}

/** The cost of the request whose async context is running (none outside a request: cron, alarms). */
const currentCost = (): StoreCost | undefined => requestContext()?.cost;

/**
 * Runs `fn` with `cost` as the request's meter: every D1 query and Durable
 * Object call made through a `meteredEnv` binding inside it is added to `cost`,
 * however deep in the store the binding was captured.
 *
 * @example await runMetered(cost, next)
 */
export function runMetered<T>(cost: StoreCost, fn: () => T): T {
  // The running log context (request id, level) carries on inside.
  return inRequestContext({ ...requestContext(), cost }, fn);
}

async function timed<T>(kind: "d1" | "do", count: number, work: () => Promise<T>): Promise<T> {
  const cost = currentCost();
  if (!cost) return work();
  const started = Date.now();
  let result: unknown;
  try {
    result = await work();
    return result as T;
  } finally {
    const ms = Date.now() - started;
    const d1: D1Cost = { ...zeroD1(), queries: kind === "d1" ? count : 0, ms: kind === "d1" ? ms : 0 };
    if (kind === "d1") {
      const rows = billedRows(result);
      d1.rowsRead = rows.read;
      d1.rowsWritten = rows.written;
      addInto(cost.d1, d1);
    } else {
      cost.do.calls += count;
      cost.do.ms += ms;
    }
    // Work the request left for after its response (waitUntil: a miss's explanation, a key's renewal, the counters' flush).
    if (cost.sealed) logEvent("debug", "store_work", { object: "worker", call: "after_response", ...workFields(d1), do_calls: kind === "do" ? count : 0 });
  }
}

function addInto(into: D1Cost, more: Partial<D1Cost>): void {
  into.queries += more.queries ?? 0;
  into.ms += more.ms ?? 0;
  into.rowsRead += more.rowsRead ?? 0;
  into.rowsWritten += more.rowsWritten ?? 0;
}

/** A `store_work` line's D1 fields. */
const workFields = (d1: D1Cost) => ({ d1_queries: d1.queries, d1_ms: d1.ms, d1_rows_read: d1.rowsRead, d1_rows_written: d1.rowsWritten });

/**
 * Runs `work` with a meter of its own and returns what it did to D1 beside
 * its value: inside a tree's object, whose bindings come from `meteredEnv`,
 * so that the object can report its D1 work for a request in its answer
 * (TreeWriter.lookupOrJoin). Throws what `work` throws.
 */
export async function meterD1<T>(work: () => Promise<T>): Promise<{ value: T; d1: D1Cost }> {
  const cost = newStoreCost();
  const value = await runMetered(cost, work);
  return { value, d1: { ...cost.d1 } };
}

/**
 * Runs a tree object's call (`object`.`call`) with a meter of its own and, at
 * LOG_LEVEL `debug`, logs what it did to D1 and to other objects as one `store_work` line
 * (`{object, call, d1_queries, d1_ms, d1_rows_read, d1_rows_written, do_calls}`): how the bench counts the D1 work a
 * recording causes after the response, which no `server-timing` can show
 * (bench/recording-cost.ts). Returns what `work` returns, throws what it throws.
 */
export async function loggedStoreWork<T>(level: LogLevel, object: string, call: string, work: () => Promise<T>): Promise<T> {
  const cost = newStoreCost();
  try {
    return await runMetered(cost, work);
  } finally {
    // The line is debug: at any other level, no context is entered and no fields are built.
    if (level === "debug") withLogContext({ level }, () => logEvent("debug", "store_work", { object, call, ...workFields(cost.d1), do_calls: cost.do.calls }));
  }
}

/**
 * Books D1 work done for the running request elsewhere (a tree's object,
 * which reported it in its answer), so that `server-timing`'s d1 entry counts
 * every D1 query the request caused, wherever it ran.
 */
export function addD1(d1: D1Cost): void {
  const cost = currentCost();
  if (!cost) return;
  addInto(cost.d1, d1);
}

/** Books a read of the per-colo layer to the running request (the last read wins). */
export function noteColo(outcome: "hit" | "miss", ms: number): void {
  const cost = currentCost();
  if (cost) cost.colo = { outcome, ms };
}

/** Metered statements, to the real ones (D1's batch needs the real statements). */
const realStatement = new WeakMap<object, D1PreparedStatement>();

const RUNS = new Set<PropertyKey>(["run", "all", "raw"]);

function meteredStatement(statement: D1PreparedStatement): D1PreparedStatement {
  const proxy = new Proxy(statement, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "bind") return (...values: unknown[]) => meteredStatement(target.bind(...values));
      // `first()` returns no meta: the same one query through `all()`, whose result carries the billed rows.
      if (property === "first") {
        return (...args: unknown[]) =>
          args.length === 0 || args[0] === undefined
            ? timed("d1", 1, () => target.all()).then((r) => (r as D1Result<unknown>).results[0] ?? null)
            : timed("d1", 1, () => Reflect.apply(value, target, args) as Promise<unknown>);
      }
      if (RUNS.has(property)) return (...args: unknown[]) => timed("d1", 1, () => Reflect.apply(value, target, args) as Promise<unknown>);
      return (...args: unknown[]) => Reflect.apply(value, target, args) as unknown;
    },
  });
  realStatement.set(proxy, statement);
  return proxy;
}

/** D1Database and D1DatabaseSession share prepare and batch; both are metered the same way. */
function meteredDatabase<D extends D1Database | D1DatabaseSession>(db: D): D {
  return new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "prepare") return (query: string) => meteredStatement(target.prepare(query));
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => timed("d1", statements.length, () => target.batch(statements.map((s) => realStatement.get(s) ?? s)));
      }
      if (property === "exec") return (query: string) => timed("d1", 1, () => (target as D1Database).exec(query));
      if (property === "withSession") {
        return (...args: unknown[]) => meteredDatabase(Reflect.apply(value, target, args) as D1DatabaseSession);
      }
      return (...args: unknown[]) => Reflect.apply(value, target, args) as unknown;
    },
  });
}

/** Every method of a Durable Object stub is an RPC call: each is counted and timed. */
function meteredStub<S extends object>(stub: S): S {
  return new Proxy(stub, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function" || typeof property === "symbol" || property === "then") return value;
      return (...args: unknown[]) => timed("do", 1, () => Promise.resolve(Reflect.apply(value, target, args) as unknown));
    },
  });
}

function meteredNamespace<N extends DurableObjectNamespace<never>>(namespace: N): N {
  return new Proxy(namespace, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "get" || property === "getByName") {
        return (...args: unknown[]) => meteredStub(Reflect.apply(value, target, args) as object);
      }
      return (...args: unknown[]) => Reflect.apply(value, target, args) as unknown;
    },
  });
}

const meteredEnvs = new WeakMap<Env, Env>();

/**
 * The Worker's bindings with every D1 shard and the tree objects metered
 * (once per isolate and env object). Calls made outside `runMetered` (or
 * `meterD1`) pass straight through. A tree's writer object reads D1 through
 * them too, so that it can report a lookup's D1 work (`meterD1`).
 */
export function meteredEnv(env: Env): Env {
  const known = meteredEnvs.get(env);
  if (known) return known;
  const record = env as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { ...record };
  for (const name of new Set(["DB", ...shardNames(env.D1_SHARDS)])) {
    const db = record[name];
    // SAFETY: the names come from D1_SHARDS and DB, which wrangler.toml binds as D1 databases.
    if (db && typeof db === "object") out[name] = meteredDatabase(db as D1Database);
  }
  // SAFETY: TREE_WRITER and TREE_LEARNER are the tree objects' namespaces; their stubs are typed by Env, the proxy keeps their shape.
  out.TREE_WRITER = meteredNamespace(env.TREE_WRITER as unknown as DurableObjectNamespace<never>);
  out.TREE_LEARNER = meteredNamespace(env.TREE_LEARNER as unknown as DurableObjectNamespace<never>);
  const metered = out as unknown as Env;
  meteredEnvs.set(env, metered);
  return metered;
}

/**
 * The cost as `Server-Timing` entries: `d1;dur=<ms>;desc=<queries>, do;dur=<ms>;desc=<calls>`,
 * and `colo;dur=<ms>;desc=hit|miss[-<colo>]` when the per-colo layer was read (`hit-SJC`). `d1` counts
 * the Worker's own queries and those a tree's object made for the request
 * (`addD1`); the object's share of `d1`'s dur lies inside `do`'s. `d1rows;desc="r=<read> w=<written>"`
 * (no comma inside, so that a split on commas keeps it whole) sums the billed rows of those queries (D1's own `meta`). Building the entries seals the cost: D1 work
 * the request does after it (waitUntil) is logged as `store_work` lines at LOG_LEVEL debug instead.
 */
export function storeTimingEntries(cost: StoreCost): string[] {
  cost.sealed = true;
  const entries = [
    `d1;dur=${cost.d1.ms};desc=${cost.d1.queries}`,
    `do;dur=${cost.do.ms};desc=${cost.do.calls}`,
    `d1rows;desc="r=${cost.d1.rowsRead} w=${cost.d1.rowsWritten}"`,
  ];
  // `desc=hit-SJC`: the outcome, then the colo whose Cache API answered (a token: no quotes needed).
  if (cost.colo) entries.push(`colo;dur=${cost.colo.ms};desc=${cost.colo.outcome}${cost.place && /^[A-Za-z0-9]+$/.test(cost.place) ? `-${cost.place}` : ""}`);
  return entries;
}
