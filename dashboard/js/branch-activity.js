// @ts-check
/** What the branch view reads from a node's counters: traffic, age, the edge style, and the filters. */

const DAY = 86_400_000;

/** @typedef {import("./branch-tree.js").NodeSummary} NodeSummary */

/** Traffic through a node: its own hits (an answer) or its answers' hits. @param {NodeSummary} d */
export function trafficOf(d) {
  return d.role === "assistant" && d.observations > 0 ? d.hits : d.answer_hits;
}

/** Last activity: last hit of the node or its answers, else its recording. @param {NodeSummary} d */
export function activityOf(d) {
  return Math.max(d.last_hit_at ?? 0, d.answer_last_hit_at ?? 0) || d.created_at;
}

/** 1 for a fresh node, fading to 0.25 after 30 days without a hit. @param {NodeSummary} d */
export function freshness(d) {
  return Math.max(0.25, 1 - (Date.now() - activityOf(d)) / (30 * DAY));
}

/** Hot paths are warm and thick; cold ones grey and thin. @param {NodeSummary} d */
export function edgeStyle(d) {
  const traffic = trafficOf(d);
  const fresh = freshness(d);
  const width = 1.5 + Math.min(9, Math.log2(1 + traffic) * 1.6);
  const hue = 18 + (1 - fresh) * 192;
  const sat = traffic > 0 ? Math.round(12 + 73 * fresh) : 15;
  return { width, colour: `hsl(${hue} ${sat}% ${traffic > 0 ? 50 : 62}%)`, opacity: fresh };
}

/**
 * The filters of the view: which nodes stay bright (the others are dimmed, never hidden, so a path
 * never breaks). @type {Record<string, (d: NodeSummary) => boolean>}
 */
export const FILTERS = {
  all: () => true,
  hit: (d) => trafficOf(d) > 0,
  recent: (d) => Date.now() - activityOf(d) < DAY,
  week: (d) => Date.now() - activityOf(d) < 7 * DAY,
  stale: (d) => Date.now() - activityOf(d) >= 7 * DAY,
};

/** @typedef {keyof typeof FILTERS} FilterName */
