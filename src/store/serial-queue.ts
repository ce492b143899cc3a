/**
 * Runs work one item after another, each after every item queued before it,
 * whatever their outcome (a failed item never blocks the next). A tree's
 * writer and learner objects each keep one: it is what serialises a tree's
 * writes, learning and moves.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
