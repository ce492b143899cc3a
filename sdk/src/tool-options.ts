import type { Check } from "./check.js";

/** Options for an instrumented tool. */
export interface ToolOptions<A extends unknown[], This = unknown, P = unknown, Q = unknown> {
  /**
   * The name the tool is stored under: its identity across processes and
   * builds. Required for function tools (minifiers rename functions); a method
   * tool defaults to its method name (property names survive minification).
   */
  name?: string;
  /**
   * Stored with each step; a recording made with another version is not
   * replayed (a `tool-changed` warning says so). Default: a hash of the tool's
   * source, so editing the tool retires its recordings, and so does a build
   * that rewrites it (minification). Set it, and bump it when the tool's
   * behaviour changes, to keep recordings across builds.
   */
  version?: string;
  /** Validates the environment before the call, at query time and before each replayed step. */
  preCheck?: Check<A, P, This>;
  /** Validates the environment after each replayed call. */
  postCheck?: Check<A, Q, This>;
}

/**
 * A check's capture may take fewer arguments than the tool (it often needs
 * none, or only `this`), but never arguments the tool does not pass.
 */
export type Compatible<A extends unknown[], B extends unknown[]> = ((...args: A) => void) extends (...args: B) => void
  ? unknown
  : { error: "the check's capture does not accept this tool's arguments" };
