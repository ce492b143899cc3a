// @ts-check
import { drawTree } from "./branch-draw.js";
import { BranchTree } from "./branch-tree.js";
import { keyMove } from "./branch-keys.js";
import { toast } from "./format.js";

export { activityOf, FILTERS, trafficOf } from "./branch-activity.js";
export { EXPAND_CAP } from "./branch-tree.js";

/**
 * @typedef {import("./branch-tree.js").NodeSummary} NodeSummary
 * @typedef {import("./branch-tree.js").Item} Item
 * @typedef {import("./branch-activity.js").FilterName} FilterName
 */

/**
 * The branch view of one tree: what is selected, filtered and found, over the loaded tree
 * (branch-tree.js), drawn after every change (branch-draw.js).
 */
export class BranchView {
  /**
   * @param {HTMLElement} frame
   * @param {string} treeId
   * @param {(item: NodeSummary) => void} onSelect
   */
  constructor(frame, treeId, onSelect) {
    this.frame = frame;
    this.tree = new BranchTree(treeId);
    this.onSelect = onSelect;
    /** @type {string | null} */
    this.selected = null;
    /** @type {FilterName} */
    this.filter = "all";
    /** The tree item in the Tab order (the keyboard's place; the selected node until a key moves it). @type {string | null} */
    this.focusId = null;
    /** Search matches (hashes). @type {Set<string>} */
    this.matches = new Set();
    /** Called after each render with the selected item's chain from the root. @type {(chain: Item[]) => void} */
    this.onPath = () => {};
  }

  /** Loaded nodes (the root aside). */
  count() {
    return this.tree.count();
  }

  async load() {
    await this.tree.fetchChildren(this.tree.root);
    this.render();
  }

  /**
   * Opens every node down to `depth` (Infinity: all) with one subtree request of at most
   * EXPAND_CAP nodes, breadth-first; answers whether the cap cut it.
   * @param {number} depth
   */
  async expandTo(depth) {
    const capped = await this.tree.expandTo(depth);
    this.render();
    return capped;
  }

  /** Closes every node but the root. */
  collapseAll() {
    this.tree.collapseAll();
    this.render();
  }

  /** Marks search matches and opens the path to each. @param {Array<{ hash: string, path: string[] }>} found */
  async reveal(found) {
    this.matches = new Set(found.map((m) => m.hash));
    // openPath opens every ancestor of the node it reaches, so each match becomes visible.
    for (const m of found.slice(1)) await this.tree.openPath(m.path);
    const first = found[0] ? await this.tree.openPath(found[0].path) : null;
    if (first) this.selected = first.id;
    this.render();
    if (first?.data) this.onSelect(first.data);
  }

  /**
   * Opens the path to a node (hashes from depth 1) and selects it, without opening the panel; answers
   * the node's item, or null when it is not in the tree.
   * @param {string[]} path
   */
  async focus(path) {
    if (path.length === 0) return null;
    const item = await this.tree.openPath(path);
    if (item) this.selected = item.id;
    this.render();
    return item;
  }

  /** Selects a loaded node by hash (breadcrumbs). @param {string} hash */
  select(hash) {
    const item = this.tree.find(hash);
    if (!item?.data) return;
    this.selected = hash;
    this.onSelect(item.data);
    this.render();
  }

  /** A click or Enter on a node. @param {Item} item @param {boolean} [keepFocus] from the keyboard: the focus stays on it */
  async toggle(item, keepFocus = false) {
    if (item.kind === "more" && item.parent) {
      await this.tree.fetchChildren(item.parent);
      return this.render(keepFocus);
    }
    if (!item.data) return;
    const wasSelected = this.selected === item.id;
    this.selected = item.id;
    this.onSelect(item.data);
    if (item.data.child_count === 0) return this.render(keepFocus);
    // A click opens a node; a click on the selected open node closes it.
    if (item.open && wasSelected) item.open = false;
    else if (item.open) return this.render(keepFocus);
    else {
      item.open = true;
      if (!item.children) await this.tree.fetchChildren(item);
    }
    this.render(keepFocus);
  }

  /** Drops a pruned node from the view. @param {string} hash */
  remove(hash) {
    this.tree.remove(hash);
    if (this.selected === hash) this.selected = null;
    this.render();
  }

  /**
   * A key on a tree item (branch-keys.js): moves the focus, opens, closes or activates.
   * @param {Item} item @param {KeyboardEvent} e
   */
  async onKey(item, e) {
    const move = keyMove(this.tree.root, item, e.key);
    if (!move) return;
    e.preventDefault();
    if (move.kind === "focus") {
      this.focusId = move.id;
      return this.moveFocus(move.id);
    }
    this.focusId = move.item.id;
    if (move.kind === "activate") return this.toggle(move.item, true);
    if (move.kind === "close") move.item.open = false;
    else {
      move.item.open = true;
      if (!move.item.children) await this.tree.fetchChildren(move.item);
    }
    this.render(true);
  }

  /**
   * Moves the keyboard's focus to drawn item `id` without drawing the tree again (a redraw of 400 nodes took
   * 40-120 ms a key): only the one tab stop moves. @param {string} id
   */
  moveFocus(id) {
    const items = /** @type {SVGElement[]} */ ([...this.frame.querySelectorAll('[role="treeitem"]')]);
    const next = items.find((e) => e.getAttribute("data-hash") === id);
    if (!next) return this.render(true);
    for (const e of items) e.setAttribute("tabindex", e === next ? "0" : "-1");
    next.focus();
    if (typeof next.scrollIntoView === "function") next.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  /** Draws the loaded tree; `keepFocus`: focus the keyboard's item after (a key moved it). @param {boolean} [keepFocus] */
  render(keepFocus = false) {
    const { svg, chain } = drawTree(this.tree.root, {
      selected: this.selected,
      focus: this.focusId,
      filter: this.filter,
      matches: this.matches,
      activate: (item) => {
        this.focusId = item.id;
        void this.toggle(item).catch((e) => toast(e.message));
      },
      key: (item, e) => void this.onKey(item, e).catch((err) => toast(err.message)),
    });
    this.frame.replaceChildren(svg);
    this.onPath(chain);
    if (keepFocus) {
      const focused = /** @type {SVGElement | null} */ (this.frame.querySelector('[role="treeitem"][tabindex="0"]'));
      focused?.focus();
      if (focused && typeof focused.scrollIntoView === "function") focused.scrollIntoView({ block: "nearest", inline: "nearest" });
      return;
    }
    // Keep the selected node in view; the breadcrumb above keeps the root one click away.
    const selected = this.frame.querySelector(".node.selected");
    if (selected && typeof selected.scrollIntoView === "function") selected.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
}
