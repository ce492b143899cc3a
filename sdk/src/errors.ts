/**
 * A misuse of the SDK that only shows at run time (an async capture on a
 * synchronous tool, a capture that returns a Date or a class instance). The
 * engine throws it instead of failing open: it is a bug to fix, and its
 * message says how.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MuscleMemUsageError";
  }
}
