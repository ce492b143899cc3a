// @ts-check
/**
 * The view in the URL: the open tree and node, the tree search, the request opened from the log and
 * the log's filters. A reload, back/forward and a shared link land in the same place.
 */

/** @typedef {{ tree: string | null, node: string | null, search: string | null, request: string | null, outcome: string, model: string, since: string, q: string, here: boolean }} UrlView */

const KEYS = /** @type {const} */ (["tree", "node", "search", "request", "outcome", "model", "since", "q", "here"]);

/** The view the URL names. @returns {UrlView} */
export function readUrl() {
  const p = new URLSearchParams(location.search);
  return {
    tree: p.get("tree"),
    node: p.get("node"),
    search: p.get("search"),
    request: p.get("request"),
    outcome: p.get("outcome") ?? "",
    model: p.get("model") ?? "",
    since: p.get("since") ?? "",
    q: p.get("q") ?? "",
    here: p.get("here") === "1",
  };
}

/**
 * Changes the URL's view: a new history entry (`push`) for a navigation (a tree, a node, a request), the
 * same entry for a filter as it is typed. Empty values leave the URL.
 * @param {Partial<Record<(typeof KEYS)[number], string | boolean | null>>} patch @param {boolean} [push]
 */
export function writeUrl(patch, push = true) {
  const p = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === "" || v === false || v === undefined) p.delete(k);
    else p.set(k, v === true ? "1" : String(v));
  }
  const search = p.toString();
  const url = `${location.pathname}${search ? `?${search}` : ""}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}
