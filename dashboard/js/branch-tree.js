// @ts-check
import { api } from "./api.js";

/**
 * @typedef {{ hash: string, parent: string, depth: number, role: string, preview: string, observations: number,
 *   hits: number, child_count: number, answer_hits: number, answer_last_hit_at: number | null, created_at: number,
 *   last_hit_at: number | null }} NodeSummary
 * @typedef {{ id: string, data: NodeSummary | null, kind: "root" | "node" | "more", children: Item[] | null,
 *   next: string | null, open: boolean, loading: boolean, parent: Item | null }} Item
 */

const PAGE = 50;

/** Nodes an expand-all loads at most (a real tree can be far larger than a screen). */
export const EXPAND_CAP = 400;

/**
 * The loaded part of one tree: levels are fetched on demand, a page of children at a time,
 * so a 100k-node tree costs only what is opened. Nothing here draws (branch-draw.js does).
 */
export class BranchTree {
  /** @param {string} treeId */
  constructor(treeId) {
    this.treeId = treeId;
    /** @type {Item} */
    this.root = { id: treeId, data: null, kind: "root", children: null, next: null, open: true, loading: false, parent: null };
  }

  /** Loaded nodes (the root aside). */
  count() {
    let n = 0;
    /** @param {Item} item */
    const walk = (item) => {
      for (const c of item.children ?? []) {
        n++;
        walk(c);
      }
    };
    walk(this.root);
    return n;
  }

  /** Fetches the next page of an item's children. @param {Item} item */
  async fetchChildren(item) {
    item.loading = true;
    const parent = item.kind === "root" ? "" : `&parent=${item.id}`;
    const cursor = item.next ? `&cursor=${encodeURIComponent(item.next)}` : "";
    const page = await api(`/trees/${this.treeId}/children?limit=${PAGE}${parent}${cursor}`);
    const fresh = page.data.map((/** @type {NodeSummary} */ d) => ({ id: d.hash, data: d, kind: "node", children: null, next: null, open: false, loading: false, parent: item }));
    item.children = [...(item.children ?? []), ...fresh];
    item.next = page.next_cursor;
    item.loading = false;
  }

  /**
   * Opens every node down to `depth` (Infinity: all), level by level, until
   * EXPAND_CAP nodes are loaded; answers whether it stopped at the cap.
   * @param {number} depth
   */
  async expandTo(depth) {
    /** @type {Item[]} */
    let level = [this.root];
    let capped = false;
    for (let d = 0; d < depth && level.length > 0; d++) {
      const openable = level.filter((item) => item.kind === "root" || (item.data && item.data.child_count > 0));
      for (let i = 0; i < openable.length; i += 6) {
        if (this.count() >= EXPAND_CAP) {
          capped = true;
          break;
        }
        await Promise.all(openable.slice(i, i + 6).map(async (item) => {
          item.open = true;
          if (!item.children) await this.fetchChildren(item);
        }));
      }
      if (capped) break;
      level = openable.flatMap((item) => item.children ?? []);
    }
    return capped;
  }

  /** Closes every node but the root. */
  collapseAll() {
    /** @param {Item} item */
    const walk = (item) => {
      if (item.kind !== "root") item.open = false;
      for (const c of item.children ?? []) walk(c);
    };
    walk(this.root);
  }

  /**
   * Opens the path to a node (hashes from depth 1 down), fetching pages as
   * needed; answers the node's item, or null when it is not in the tree.
   * @param {string[]} path
   */
  async openPath(path) {
    let item = this.root;
    for (const hash of path) {
      item.open = true;
      if (!item.children) await this.fetchChildren(item);
      let child = item.children?.find((c) => c.id === hash);
      while (!child && item.next) {
        await this.fetchChildren(item);
        child = item.children?.find((c) => c.id === hash);
      }
      if (!child) return null;
      item = child;
    }
    return item;
  }

  /** A loaded node by hash, or null. @param {string} hash */
  find(hash) {
    /** @param {Item} item @returns {Item | null} */
    const find = (item) => {
      if (item.id === hash) return item;
      for (const c of item.children ?? []) {
        const f = find(c);
        if (f) return f;
      }
      return null;
    };
    return find(this.root);
  }

  /** Drops a pruned node (and so its branch) from the loaded tree. @param {string} hash */
  remove(hash) {
    /** @param {Item} item */
    const walk = (item) => {
      if (!item.children) return false;
      const i = item.children.findIndex((c) => c.id === hash);
      if (i >= 0) {
        item.children.splice(i, 1);
        if (item.data) item.data.child_count = Math.max(0, item.data.child_count - 1);
        return true;
      }
      return item.children.some(walk);
    };
    walk(this.root);
  }
}
