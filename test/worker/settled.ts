import { createExecutionContext, listDurableObjectIds, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../src/index";

/**
 * Runs `work` with every request it sends to the Worker (`exports.default.fetch`, what the test helpers use)
 * handled in this isolate under an execution context of its own, then waits for all of them and for what
 * they left behind (`ctx.waitUntil`: a recording through the tree's object, or the decision not to record).
 * What a test reads after it is final: an answer not recorded by then never will be, with no sleep.
 * `work` must read the bodies it gets (a stream's recording settles when the stream ends).
 */
export async function settled<T>(work: () => Promise<T>): Promise<T> {
  const contexts: ExecutionContext[] = [];
  const spy = vi.spyOn(exports.default, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const ctx = createExecutionContext();
    contexts.push(ctx);
    return worker.fetch(new Request(input, init), env, ctx);
  });
  try {
    return await work();
  } finally {
    spy.mockRestore();
    for (const ctx of contexts) await waitOnExecutionContext(ctx);
  }
}

/**
 * Requests waiting as single-flight followers in every tree writer of this test file (each writer's
 * SingleFlight waiters: private state, read here so that a test waits for followers to join its leader's
 * flight instead of sleeping and hoping they did).
 */
export async function followersWaiting(): Promise<number> {
  let n = 0;
  for (const id of await listDurableObjectIds(env.TREE_WRITER)) {
    n += await runInDurableObject(env.TREE_WRITER.get(id), (writer) => {
      const flights = (writer as unknown as { flights: { flights: Map<string, { waiters: unknown[] }> } }).flights.flights;
      return [...flights.values()].reduce((sum, f) => sum + f.waiters.length, 0);
    });
  }
  return n;
}

/**
 * Runs now the learning every tree learner of this test file has queued (a recorded miss only queues its
 * recording; the learner's alarm learns it LEARN_DELAY_MS later, src/store/objects/tree-learner.ts), and waits
 * for learning already under way. Call it after `settled()`: then every recording has reached its learner.
 * An alarm the runtime fired just before may still have recordings of its batch to learn after this returns:
 * read what learning writes with `eventually`, not once.
 */
export async function learningRan(): Promise<void> {
  for (const id of await listDurableObjectIds(env.TREE_LEARNER)) {
    const learner = env.TREE_LEARNER.get(id);
    await runDurableObjectAlarm(learner);
    await runInDurableObject(learner, (instance) =>
      (instance as unknown as { serialised: (work: () => Promise<void>) => Promise<void> }).serialised(async () => undefined),
    );
  }
}
