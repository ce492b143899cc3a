/**
 * Loaded before each docs/sdk.md snippet (tsx --import): time passes only when the snippet waits. Date.now()
 * starts at the real time and moves forward by each setTimeout's delay when the timer is set, and the timer
 * fires at once. What a snippet prints then does not depend on how fast the machine runs it.
 */
let now = Date.now();
const realSetTimeout = globalThis.setTimeout;

Date.now = () => now;

function virtualSetTimeout(handler: (...args: unknown[]) => void, delay = 0, ...args: unknown[]): ReturnType<typeof realSetTimeout> {
  now += Math.max(0, delay);
  return realSetTimeout(handler, 0, ...args);
}

globalThis.setTimeout = Object.assign(virtualSetTimeout, realSetTimeout) as typeof setTimeout;
