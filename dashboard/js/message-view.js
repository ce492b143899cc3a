// @ts-check
/**
 * What a node's message says, whatever API the tree was recorded through: the
 * node API (GET /api/nodes/:hash) answers it as `view`, built by the tree's
 * provider (src/providers/<api>/view.ts), so the dashboard knows no API's
 * shapes. Read defensively: a field that is missing or not a list is empty.
 * Pure, so that it is unit-tested without a browser.
 */

/**
 * @typedef {{ name: string, id: string, args: string }} Call
 * @typedef {{ id: string, text: string }} Result
 * @typedef {{ texts: string[], calls: Call[], results: Result[], refusals: string[] }} MessageView
 */

/** @param {unknown} v @returns {any[]} */
const list = (v) => (Array.isArray(v) ? v : []);

/** @param {unknown} v */
const str = (v) => (typeof v === "string" ? v : v == null ? "" : String(v));

/**
 * The view of a node from the node API.
 * @param {{ view?: unknown }} node
 * @returns {MessageView}
 */
export function messageView(node) {
  /** @type {Record<string, unknown>} */
  const v = typeof node?.view === "object" && node.view !== null ? /** @type {Record<string, unknown>} */ (node.view) : {};
  return {
    texts: list(v.texts)
      .map(str)
      .filter((t) => t !== ""),
    calls: list(v.calls).map((c) => ({ name: str(c?.name), id: str(c?.id), args: str(c?.args) })),
    results: list(v.results).map((r) => ({ id: str(r?.id), text: str(r?.text) })),
    refusals: list(v.refusals).map(str),
  };
}
