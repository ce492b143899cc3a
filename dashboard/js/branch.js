// @ts-check
import { hierarchy, tree as treeLayout } from "../vendor/d3-hierarchy.mjs";
import { api } from "./api.js";
import { ago } from "./format.js";

const SVG = "http://www.w3.org/2000/svg";
const PAGE = 50;
const ROW = 40;
const COLUMN = 200;
const DAY = 86_400_000;

/**
 * @typedef {{ hash: string, parent: string, depth: number, role: string, preview: string, observations: number,
 *   hits: number, child_count: number, answer_hits: number, answer_last_hit_at: number | null, created_at: number,
 *   last_hit_at: number | null }} NodeSummary
 * @typedef {{ id: string, data: NodeSummary | null, kind: "root" | "node" | "more", children: Item[] | null,
 *   next: string | null, open: boolean, loading: boolean, parent: Item | null }} Item
 */

/** Traffic through a node: its own hits (an answer) or its answers' hits. @param {NodeSummary} d */
export function trafficOf(d) {
  return d.role === "assistant" && d.observations > 0 ? d.hits : d.answer_hits;
}

/** Last activity: last hit of the node or its answers, else its recording. @param {NodeSummary} d */
export function activityOf(d) {
  return Math.max(d.last_hit_at ?? 0, d.answer_last_hit_at ?? 0) || d.created_at;
}

/** 1 for a fresh node, fading to 0.25 after 30 days without a hit. @param {NodeSummary} d */
function freshness(d) {
  return Math.max(0.25, 1 - (Date.now() - activityOf(d)) / (30 * DAY));
}

/** Hot paths are warm and thick; cold ones grey and thin. @param {NodeSummary} d */
function edgeStyle(d) {
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

/** Nodes an expand-all loads at most (a real tree can be far larger than a screen). */
export const EXPAND_CAP = 400;

const ROLE_GLYPH = { system: "S", developer: "D", user: "U", assistant: "A", tool: "T", function: "F" };

/**
 * The branch view of one tree: levels are fetched on demand, a page of
 * children at a time, so a 100k-node tree costs only what is opened.
 */
export class BranchView {
  /**
   * @param {HTMLElement} frame
   * @param {string} treeId
   * @param {(item: NodeSummary) => void} onSelect
   */
  constructor(frame, treeId, onSelect) {
    this.frame = frame;
    this.treeId = treeId;
    this.onSelect = onSelect;
    /** @type {Item} */
    this.root = { id: treeId, data: null, kind: "root", children: null, next: null, open: true, loading: false, parent: null };
    /** @type {string | null} */
    this.selected = null;
    /** @type {FilterName} */
    this.filter = "all";
    /** Search matches (hashes). @type {Set<string>} */
    this.matches = new Set();
    /** Called after each render with the selected item's chain from the root. @type {(chain: Item[]) => void} */
    this.onPath = () => {};
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
    this.render();
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
    this.render();
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

  /** Marks search matches and opens the path to each. @param {Array<{ hash: string, path: string[] }>} found */
  async reveal(found) {
    this.matches = new Set(found.map((m) => m.hash));
    // openPath opens every ancestor of the node it reaches, so each match becomes visible.
    for (const m of found.slice(1)) await this.openPath(m.path);
    const first = found[0] ? await this.openPath(found[0].path) : null;
    if (first) this.selected = first.id;
    this.render();
    if (first?.data) this.onSelect(first.data);
  }

  /** Selects a loaded node by hash (breadcrumbs). @param {string} hash */
  select(hash) {
    /** @param {Item} item @returns {Item | null} */
    const find = (item) => {
      if (item.id === hash) return item;
      for (const c of item.children ?? []) {
        const f = find(c);
        if (f) return f;
      }
      return null;
    };
    const item = find(this.root);
    if (!item?.data) return;
    this.selected = hash;
    this.onSelect(item.data);
    this.render();
  }

  async load() {
    await this.fetchChildren(this.root);
    this.render();
  }

  /** @param {Item} item */
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

  /** @param {Item} item */
  async toggle(item) {
    if (item.kind === "more" && item.parent) {
      await this.fetchChildren(item.parent);
      return this.render();
    }
    if (!item.data) return;
    const wasSelected = this.selected === item.id;
    this.selected = item.id;
    this.onSelect(item.data);
    if (item.data.child_count === 0) return this.render();
    // A click opens a node; a click on the selected open node closes it.
    if (item.open && wasSelected) item.open = false;
    else if (item.open) return this.render();
    else {
      item.open = true;
      if (!item.children) await this.fetchChildren(item);
    }
    this.render();
  }

  /** Drops a pruned node from the view. @param {string} hash */
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
    if (this.selected === hash) this.selected = null;
    this.render();
  }

  render() {
    const root = hierarchy(this.root, (/** @type {Item} */ item) => {
      if (!item.open || !item.children) return null;
      const more = item.next ? [{ id: `${item.id}:more`, data: null, kind: "more", children: null, next: null, open: false, loading: false, parent: item }] : [];
      return [...item.children, ...more];
    });
    treeLayout().nodeSize([ROW, COLUMN])(root);
    let minX = Infinity;
    let maxX = -Infinity;
    let maxY = 0;
    root.each((n) => {
      minX = Math.min(minX, n.x ?? 0);
      maxX = Math.max(maxX, n.x ?? 0);
      maxY = Math.max(maxY, n.y ?? 0);
    });
    const width = maxY + COLUMN + 40;
    const height = maxX - minX + ROW * 2;
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.setAttribute("role", "tree");
    const g = document.createElementNS(SVG, "g");
    g.setAttribute("transform", `translate(24, ${ROW - minX})`);
    svg.append(g);
    for (const link of root.links()) {
      const d = /** @type {Item} */ (link.target.data).data;
      const style = d ? edgeStyle(d) : { width: 1, colour: "#9aa4b2", opacity: 0.6 };
      const path = document.createElementNS(SVG, "path");
      const [sx, sy, tx, ty] = [link.source.x ?? 0, link.source.y ?? 0, link.target.x ?? 0, link.target.y ?? 0];
      const mid = (sy + ty) / 2;
      path.setAttribute("d", `M${sy},${sx}C${mid},${sx} ${mid},${tx} ${ty},${tx}`);
      path.setAttribute("class", "edge");
      path.setAttribute("stroke", style.colour);
      path.setAttribute("stroke-width", String(style.width));
      path.setAttribute("stroke-opacity", String(style.opacity));
      g.append(path);
    }
    /** @type {Item[]} */
    let chain = [];
    for (const node of root.descendants()) {
      const item = /** @type {Item} */ (node.data);
      g.append(this.nodeElement(item, node.x ?? 0, node.y ?? 0));
      if (item.id === this.selected) chain = node.ancestors().reverse().map((a) => /** @type {Item} */ (a.data));
    }
    this.frame.replaceChildren(svg);
    this.onPath(chain);
    // Keep the selected node in view; the breadcrumb above keeps the root one click away.
    const selected = this.frame.querySelector(".node.selected");
    if (selected && typeof selected.scrollIntoView === "function") selected.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  /** @param {Item} item @param {number} x @param {number} y */
  nodeElement(item, x, y) {
    const group = document.createElementNS(SVG, "g");
    group.setAttribute("transform", `translate(${y},${x})`);
    group.setAttribute("class", `node ${item.kind}${item.id === this.selected ? " selected" : ""}`);
    group.setAttribute("data-hash", item.id);
    group.setAttribute("role", "treeitem");
    group.setAttribute("tabindex", "0");
    const hit = document.createElementNS(SVG, "rect");
    hit.setAttribute("class", "hit");
    hit.setAttribute("x", "-12");
    hit.setAttribute("y", "-28");
    hit.setAttribute("width", String(COLUMN - 24));
    hit.setAttribute("height", "40");
    const circle = document.createElementNS(SVG, "circle");
    circle.setAttribute("r", item.kind === "root" ? "7" : "9");
    const label = document.createElementNS(SVG, "text");
    label.setAttribute("x", "-6");
    label.setAttribute("y", "-14");
    const glyph = document.createElementNS(SVG, "text");
    glyph.setAttribute("class", "glyph");
    glyph.setAttribute("text-anchor", "middle");
    glyph.setAttribute("dy", "0.35em");
    const title = document.createElementNS(SVG, "title");
    if (item.kind === "root") {
      label.textContent = "root";
    } else if (item.kind === "more") {
      label.textContent = "more…";
      glyph.textContent = "+";
    } else if (item.data) {
      const d = item.data;
      group.classList.add(`role-${d.role}`);
      if (d.observations > 0 && d.role === "assistant") group.classList.add("answer");
      if (d.child_count > 0) group.classList.add(item.open ? "open" : "closed");
      group.setAttribute("opacity", String(0.35 + 0.65 * freshness(d)));
      if (!FILTERS[this.filter](d)) group.classList.add("dim");
      if (this.matches.has(item.id)) group.classList.add("match");
      group.setAttribute("aria-label", `${d.role}: ${d.preview}`);
      glyph.textContent = ROLE_GLYPH[/** @type {keyof typeof ROLE_GLYPH} */ (d.role)] ?? "?";
      const text = d.preview.length > 27 ? `${d.preview.slice(0, 26)}…` : d.preview;
      const traffic = trafficOf(d);
      label.textContent = traffic > 0 ? `${text}  ·${traffic}` : text;
      title.textContent = `${d.role}: ${d.preview}\nhits ${traffic} · last ${ago(activityOf(d))} · ${d.child_count}${d.child_count >= 1000 ? "+" : ""} children`;
    }
    group.append(title, hit, circle, glyph, label);
    const activate = () => void this.toggle(item).catch((e) => alert(e.message));
    group.addEventListener("click", activate);
    group.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        activate();
      }
    });
    return group;
  }
}
