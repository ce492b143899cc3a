/**
 * A timer turn, awaited between pages of long store work (a move's pages,
 * the items of a tree's queue). Under `wrangler dev` the Worker, its Durable
 * Objects and the local D1 databases run in one workerd process, and a call
 * from one to another never leaves it: a chain of such calls kept the event
 * loop busy without a turn at its sockets, so the local Worker accepted no
 * request (not even `GET /healthz`) until the chain ended (docs/performance.md
 * "Scale rows"). A timer lets the loop poll its sockets. On the platform D1
 * is a network call and the turn costs next to nothing.
 */
export function breathe(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
