/** Helpers of the key hunt (test/worker/key-hunt*.test.ts). */

/** Whether a response is served from the cache (drains it). */
export async function served(res: Response): Promise<boolean> {
  await res.arrayBuffer();
  return res.status === 200 && res.headers.get("muscle-mem-cache") === "hit";
}

/** Ask for a cached answer only: a 504 when there is none to serve. */
export const onlyIfCached = { "cache-control": "only-if-cached" };
