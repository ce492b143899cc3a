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
    const fresh = page.data.map((/** @type {NodeSummary} */ d) => ({
      id: d.hash,
      data: d,
      kind: "node",
      children: null,
      next: null,
      open: false,
      loading: false,
      parent: item,
    }));
    item.children = [...(item.children ?? []), ...fresh];
    item.next = page.next_cursor;
    item.loading = false;
  }

  /**
   * Opens every node down to `depth` (Infinity: all) with one subtree request of at most
   * EXPAND_CAP nodes (breadth-first); answers whether the cap cut it. A node opens when all its
   * children came back; one the cap cut keeps what it had loaded (open it to page on).
   * @param {number} depth
   */
  async expandTo(depth) {
    const levels = Number.isFinite(depth) ? `&depth=${depth}` : "";
    /** @type {{ data: NodeSummary[], truncated: boolean }} */
    const page = await api(`/trees/${this.treeId}/subtree?limit=${EXPAND_CAP}${levels}`);
    /** @type {Map<string, Item>} */
    const known = new Map();
    /** @param {Item} item */
    const index = (item) => {
      known.set(item.id, item);
      for (const c of item.children ?? []) index(c);
    };
    index(this.root);
    /** @type {Map<string, NodeSummary[]>} */
    const groups = new Map();
    for (const d of page.data) groups.set(d.parent, [...(groups.get(d.parent) ?? []), d]);
    // Breadth-first: a parent comes back before its children, so each group's parent is known by now.
    for (const [parentId, kids] of groups) {
      const parent = known.get(parentId);
      if (!parent) continue;
      const whole = parent.kind === "root" ? !page.truncated || page.data.some((d) => d.parent !== this.treeId) : kids.length === parent.data?.child_count;
      if (!whole) continue;
      parent.children = kids.map((d) => {
        const had = known.get(d.hash);
        if (had) {
          had.data = d;
          return had;
        }
        const item = /** @type {Item} */ ({ id: d.hash, data: d, kind: "node", children: null, next: null, open: false, loading: false, parent });
        known.set(d.hash, item);
        return item;
      });
      parent.next = null;
      parent.open = true;
    }
    return page.truncated;
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
