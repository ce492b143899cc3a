// @ts-check
import { api } from "./api.js";
import { openMiss } from "./why.js";

/**
 * Opens a request of the log where it happened: a hit's whole path in its tree with the serving node
 * selected and open; a miss's tree at its divergence (the request's own new node when it was recorded,
 * else the closest recorded sibling), with the explanation in the panel.
 *
 * @typedef {{ showTree: (id: string) => Promise<import("./branch.js").BranchView | null>, panel: HTMLElement,
 *   openNode: (hash: string) => Promise<void>, onClose: () => void }} Opener
 */

/** The hashes from depth 1 to `hash`. @param {string} hash @returns {Promise<string[]>} */
export async function pathTo(hash) {
  return (await api(`/nodes/${hash}/path`)).hashes;
}

/** @param {Opener} opener @param {import("./requests.js").Recent} row */
export async function openRequest(opener, row) {
  if (!row.tree_id) return;
  const view = await opener.showTree(row.tree_id);
  if (!view) return;
  const e = row.explanation;
  if (row.outcome === "miss" && e) {
    const d = e.divergence;
    if (d) {
      const fork = d.parent === row.tree_id ? [] : await pathTo(d.parent).catch(() => /** @type {string[]} */ ([]));
      const mine = await view.focus([...fork, d.node]);
      if (!mine && d.closest) await view.focus([...fork, d.closest.node]);
      else if (!mine && fork.length) await view.focus(fork);
    }
    await openMiss(opener.panel, row, { onClose: opener.onClose });
    return;
  }
  if (row.node) {
    await view.focus(await pathTo(row.node));
    await opener.openNode(row.node);
  }
}
