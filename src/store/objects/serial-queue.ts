import { breathe } from "../../core/timer-turn";

/**
 * Runs work one item after another, each after every item queued before it,
 * whatever their outcome (a failed item never blocks the next). A tree's
 * writer and learner objects each keep one: it is what serialises a tree's
 * writes, learning and moves.
 *
 * An item queued behind another starts after a timer turn
 * (src/core/timer-turn.ts): under `wrangler dev` a backlog (the recordings and
 * learning queued behind a move's copy) otherwise ran as one chain of
 * in-process D1 calls and kept the local Worker from answering anything for
 * seconds. An item queued on an idle queue starts at once, as before.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  run<T>(work: () => Promise<T>): Promise<T> {
    const behind = this.queued > 0;
    this.queued++;
    const run = behind ? this.tail.then(breathe, breathe).then(work) : this.tail.then(work, work);
    const done = () => {
      this.queued--;
    };
    this.tail = run.then(done, done);
    return run;
  }
}
