import type { StoredAnswer } from "../../cache/answer";
import { choose, type ServePolicy } from "../../cache/policy";
import { readAnswers } from "../../store/answers";
import type { HotCache } from "../../store/hot-cache";

export type Lookup = { status: "hit"; answer: StoredAnswer } | { status: "miss" } | { status: "failed"; error: unknown };

/** Rejects after `ms`, so that a slow store can never hold an agent back. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The exact lookup: the answers at h_n from isolate memory or one indexed D1
 * query, then the serving policy. Never throws: a failing store is reported
 * as `failed`, and the caller fails open.
 */
export async function lookupAnswer(db: D1Database, hot: HotCache, key: string, policy: ServePolicy, timeoutMs: number): Promise<Lookup> {
  let answers = hot.get(key);
  if (!answers) {
    try {
      answers = await withTimeout(readAnswers(db, key), timeoutMs, "D1 lookup");
    } catch (error) {
      return { status: "failed", error };
    }
    hot.set(key, answers);
  }
  const chosen = choose(answers, policy);
  return chosen === null ? { status: "miss" } : { status: "hit", answer: answers[chosen] };
}
