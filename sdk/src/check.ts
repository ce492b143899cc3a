/** A compare callback answers a pass/fail, or a similarity score in [0, 1]. */
export type CompareResult = boolean | number;

export interface CheckOptions {
  /**
   * The lowest score that passes when `compare` returns a number. Default 0.9.
   * Booleans ignore it. A score outside [0, 1], or NaN, never passes.
   */
  threshold?: number;
}

/** How one comparison came out. `score` ranks candidates that pass. */
export interface Verdict {
  pass: boolean;
  score: number;
}

export const DEFAULT_THRESHOLD = 0.9;

type Primitive = string | number | boolean | null | undefined;

/** T with everything that cannot be stored (functions, and so Date, Map and other class objects with methods) mapped to never. */
export type Snapshot<T> = T extends Primitive
  ? T
  : T extends (...args: never[]) => unknown
    ? never
    : T extends object
      ? { [K in keyof T]: Snapshot<T[K]> }
      : never;

/** Unknown when a capture's value can be stored; otherwise a type that names the fix. */
export type StorableSnapshot<T> = [T] extends [Snapshot<T>]
  ? unknown
  : {
      "muscle-mem": "a capture must return plain data (objects, arrays, strings, numbers, booleans, null): return date.getTime() for a Date, { ...fields } for a class instance";
    };

/**
 * Checks make replays safe: `capture` reads the features of the environment
 * that decide whether a tool call is still valid, and `compare` decides whether
 * the current capture matches one recorded earlier.
 *
 * `capture` receives the tool's arguments, and `this` for method tools. Its
 * value is stored with the step, so it must be JSON-like (plain objects,
 * arrays, strings, numbers, booleans, null, undefined).
 *
 * @example
 * const fresh = new Check(
 *   (name: string) => ({ name, at: Date.now() }),
 *   (current, candidate) => current.at - candidate.at <= 1000,
 * );
 * const similar = new Check(cropAround, pixelSimilarity, { threshold: 0.95 });
 */
export class Check<A extends unknown[], T, This = unknown> {
  readonly threshold: number;

  constructor(
    readonly capture: (this: This, ...args: A) => T | Promise<T>,
    readonly compare: ((current: T, candidate: T) => CompareResult) & StorableSnapshot<T>,
    options: CheckOptions = {},
  ) {
    const threshold = options.threshold ?? DEFAULT_THRESHOLD;
    if (!(threshold >= 0 && threshold <= 1)) {
      throw new RangeError(`muscle-mem: Check threshold must be in [0, 1], got ${threshold}`);
    }
    this.threshold = threshold;
  }

  /** Judges one comparison result against this check's threshold. */
  judge(result: unknown): Verdict {
    return judge(result, this.threshold);
  }
}

/**
 * Turns what `compare` returned into a verdict. A number is a score, never a
 * truthiness: 0.3 fails a 0.5 threshold although it is truthy, and 0.0 fails
 * because it is below any threshold above 0, not because it is falsy.
 */
export function judge(result: unknown, threshold: number): Verdict {
  if (result === true) return { pass: true, score: 1 };
  if (typeof result === "number" && result >= 0 && result <= 1) {
    return { pass: result >= threshold, score: result };
  }
  // false, NaN, out-of-range scores and anything that is not a boolean or number
  return { pass: false, score: 0 };
}

/** A check with its types erased, as the engine stores it. */
export interface ErasedCheck {
  capture(self: unknown, args: unknown[]): unknown;
  verdict(current: unknown, candidate: unknown): Verdict;
}

export function eraseCheck<A extends unknown[], T, This>(check: Check<A, T, This>): ErasedCheck {
  return {
    capture: (self, args) => check.capture.apply(self as This, args as A),
    verdict: (current, candidate) => check.judge(check.compare(current as T, candidate as T)),
  };
}
