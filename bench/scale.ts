/**
 * `npm run bench -- --only scale [--tally-seconds 95 --tally-contrast-seconds 20 --move-conversations 2500]`:
 * the two scale rows of the edge hit path, each on its own `wrangler dev`:
 * hit-caused D1 writes under 4 isolates' worth of load (bench/tally-writes.ts)
 * and a move of a 10k-node tree between two local shards under load
 * (bench/move-under-load.ts). `--tally-seconds 0` or `--move-conversations 0` leaves one out. docs/performance.md "Scale rows" says what each measures.
 */
import { log } from "./http";
import { moveRows } from "./move-under-load";
import type { Row } from "./table";
import { tallyRows } from "./tally-writes";

export interface ScaleOptions {
  tallySeconds: number;
  tallyContrastSeconds: number;
  moveConversations: number;
}

export async function scaleRows(snapshot: { dir: string; config: string }, opts: ScaleOptions): Promise<{ rows: Row[]; results: Record<string, unknown> }> {
  const t0 = Date.now();
  // 0 seconds or 0 conversations leaves a half out.
  const tally = opts.tallySeconds > 0 ? await tallyRows(snapshot, { seconds: opts.tallySeconds, contrastSeconds: opts.tallyContrastSeconds, trees: 4, nodesPerTree: 60 }) : null;
  log(`scale: tally rows ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const t1 = Date.now();
  const move = opts.moveConversations > 0 ? await moveRows({ conversations: opts.moveConversations, disputed: 20, hitConnections: 4, marginSeconds: 3, checked: 400 }) : null;
  log(`scale: move rows ${((Date.now() - t1) / 1000).toFixed(0)} s`);
  return { rows: [...(tally?.rows ?? []), ...(move?.rows ?? [])], results: { tally: tally?.results, move: move?.results } };
}
