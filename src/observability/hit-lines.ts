import type { RequestLogLine } from "./log";

/**
 * The log line that stands for the hits of one tree on one route (exact hits
 * and template hits apart) between two flushes: how many, their mean and
 * slowest total time, and when the first and last were answered.
 */
export interface HitsLogLine {
  event: "hits";
  level: "info";
  tree: string | null;
  route: string;
  /** `hit`, or `template` when a template served them. */
  outcome: "hit" | "template";
  count: number;
  ms: { mean: number; max: number };
  first_at: string;
  last_at: string;
}

interface Group {
  tree: string | null;
  route: string;
  outcome: "hit" | "template";
  count: number;
  totalMs: number;
  maxMs: number;
  firstAt: number;
  lastAt: number;
}

/** Groups buffered per isolate at most: past it, the oldest group is written out early (nothing is dropped). */
export const MAX_HIT_GROUPS = 1000;

/**
 * Hit lines gathered in isolate memory, one group per (tree, route, outcome),
 * written as one `hits` line per group at the next counter flush. At
 * `LOG_LEVEL=info` a hit is not a line of its own: at thousands of hits a
 * second, a line per hit costs more than the hit (locally, wrangler reads
 * every line over the inspector) and fills Workers Logs with repeats. Misses,
 * bypasses and errors keep their own line; `debug` writes every hit's line.
 */
export class HitLines {
  private readonly groups = new Map<string, Group>();
  private scheduled = false;

  /** Adds a hit's request line; returns a group's line when the buffer was full (write it now). */
  add(line: RequestLogLine, template: boolean, at = Date.now()): HitsLogLine | null {
    const outcome = template ? "template" : "hit";
    const id = `${line.tree ?? ""}\n${line.route}\n${outcome}`;
    const group = this.groups.get(id);
    const ms = line.ms.total;
    if (group) {
      group.count++;
      group.totalMs += ms;
      group.maxMs = Math.max(group.maxMs, ms);
      group.lastAt = at;
      return null;
    }
    this.groups.set(id, { tree: line.tree, route: line.route, outcome, count: 1, totalMs: ms, maxMs: ms, firstAt: at, lastAt: at });
    if (this.groups.size <= MAX_HIT_GROUPS) return null;
    const [oldestId, oldest] = this.groups.entries().next().value as [string, Group];
    this.groups.delete(oldestId);
    return lineOf(oldest);
  }

  /** Whether lines wait and no flush is scheduled yet. */
  due(): boolean {
    return this.groups.size > 0 && !this.scheduled;
  }

  markScheduled(): void {
    this.scheduled = true;
  }

  /** Removes and returns every group's line. */
  drain(): HitsLogLine[] {
    this.scheduled = false;
    const lines = [...this.groups.values()].map(lineOf);
    this.groups.clear();
    return lines;
  }
}

function lineOf(g: Group): HitsLogLine {
  return {
    event: "hits",
    level: "info",
    tree: g.tree,
    route: g.route,
    outcome: g.outcome,
    count: g.count,
    ms: { mean: Math.round((g.totalMs / g.count) * 10) / 10, max: g.maxMs },
    first_at: new Date(g.firstAt).toISOString(),
    last_at: new Date(g.lastAt).toISOString(),
  };
}

/** Writes gathered hit lines (never breaks the caller). */
export function writeHitLines(lines: readonly HitsLogLine[]): void {
  for (const line of lines) console.log(JSON.stringify(line));
}
