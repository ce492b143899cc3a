/**
 * `npm run bench -- --only scale [--scale-rows tally,move --tally-seconds 95 --tally-contrast-seconds 20 --move-conversations 2500]`:
 * the two scale rows of the edge hit path, each on its own `wrangler dev`:
 * hit-caused D1 writes under 4 isolates' worth of load (bench/tally-writes.ts)
 * and a move of a 10k-node tree between two local shards under load
 * (bench/move-under-load.ts). `--scale-rows move` (or `tally`) runs one of them;
 * so do `--tally-seconds 0` and `--move-conversations 0`. docs/performance.md "Scale rows" says what each measures.
 */
import { log } from "./http";
import { moveRows } from "./move-under-load";
import type { Row } from "./table";
import { tallyRows } from "./tally-writes";

/** The scale section's rows, each on its own `wrangler dev`. */
export const SCALE_ROWS = ["tally", "move"] as const;

export interface ScaleOptions {
  /** Which of SCALE_ROWS to run (default: both). */
  rows?: readonly string[];
  tallySeconds: number;
  tallyContrastSeconds: number;
  moveConversations: number;
}

export async function scaleRows(snapshot: { dir: string; config: string }, opts: ScaleOptions): Promise<{ rows: Row[]; results: Record<string, unknown> }> {
  const rows = opts.rows ?? SCALE_ROWS;
  for (const r of rows) if (!(SCALE_ROWS as readonly string[]).includes(r)) throw new Error(`--scale-rows: unknown row ${r} (known: ${SCALE_ROWS.join(", ")})`);
  const t0 = Date.now();
  // A row not asked for, 0 seconds or 0 conversations leaves a half out.
  const tally =
    rows.includes("tally") && opts.tallySeconds > 0
      ? await tallyRows(snapshot, { seconds: opts.tallySeconds, contrastSeconds: opts.tallyContrastSeconds, trees: 4, nodesPerTree: 60 })
      : null;
  log(`scale: tally rows ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const t1 = Date.now();
  const move =
    rows.includes("move") && opts.moveConversations > 0
      ? await moveRows({ conversations: opts.moveConversations, disputed: 20, hitConnections: 4, marginSeconds: 3, checked: 400 })
      : null;
  log(`scale: move rows ${((Date.now() - t1) / 1000).toFixed(0)} s`);
  return { rows: [...(tally?.rows ?? []), ...(move?.rows ?? [])], results: { tally: tally?.results, move: move?.results } };
}
