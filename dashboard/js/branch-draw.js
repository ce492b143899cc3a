// @ts-check
import { hierarchy, tree as treeLayout } from "../vendor/d3-hierarchy.mjs";
import { activityOf, edgeStyle, FILTERS, freshness, trafficOf } from "./branch-activity.js";
import { ago, shown } from "./format.js";

/**
 * @typedef {import("./branch-tree.js").Item} Item
 * @typedef {import("./branch-activity.js").FilterName} FilterName
 * @typedef {{ selected: string | null, focus: string | null, filter: FilterName, matches: Set<string>, activate: (item: Item) => void,
 *   key: (item: Item, e: KeyboardEvent) => void }} Look
 *   what the view marks (the selected node and the path to it, the one item in the Tab order, the filter, search
 *   matches), what a click on a node does and where its keys go (branch-keys.js)
 */

const SVG = "http://www.w3.org/2000/svg";
const ROW = 40;
const COLUMN = 200;
const ROLE_GLYPH = { system: "S", developer: "D", user: "U", assistant: "A", tool: "T", function: "F" };

/**
 * Lays out the open part of the tree left to right with d3-hierarchy and draws it as SVG; answers
 * the drawing and the selected item's chain from the root (empty when nothing is selected).
 * @param {Item} rootItem @param {Look} look
 */
export function drawTree(rootItem, look) {
  const root = hierarchy(rootItem, (/** @type {Item} */ item) => {
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
  svg.setAttribute("aria-label", "Trajectory tree");
  const g = document.createElementNS(SVG, "g");
  g.setAttribute("transform", `translate(24, ${ROW - minX})`);
  svg.append(g);
  const selectedNode = root.descendants().find((n) => /** @type {Item} */ (n.data).id === look.selected);
  /** The selected node's run, from the root: its nodes and edges are marked. */
  const onPath = new Set(selectedNode ? selectedNode.ancestors().map((a) => /** @type {Item} */ (a.data).id) : []);
  const tabbable =
    look.focus && root.descendants().some((n) => /** @type {Item} */ (n.data).id === look.focus)
      ? look.focus
      : look.selected && onPath.size
        ? look.selected
        : rootItem.id;
  for (const link of root.links()) {
    const d = /** @type {Item} */ (link.target.data).data;
    const style = d ? edgeStyle(d) : { width: 1, colour: "#9aa4b2", opacity: 0.6 };
    const path = document.createElementNS(SVG, "path");
    const [sx, sy, tx, ty] = [link.source.x ?? 0, link.source.y ?? 0, link.target.x ?? 0, link.target.y ?? 0];
    const mid = (sy + ty) / 2;
    path.setAttribute("d", `M${sy},${sx}C${mid},${sx} ${mid},${tx} ${ty},${tx}`);
    path.setAttribute("class", onPath.has(/** @type {Item} */ (link.target.data).id) ? "edge on-path" : "edge");
    path.setAttribute("stroke", style.colour);
    path.setAttribute("stroke-width", String(style.width));
    path.setAttribute("stroke-opacity", String(style.opacity));
    g.append(path);
  }
  /** @type {Item[]} */
  let chain = [];
  for (const node of root.descendants()) {
    const item = /** @type {Item} */ (node.data);
    const el = nodeElement(item, node.x ?? 0, node.y ?? 0, look);
    el.setAttribute("tabindex", item.id === tabbable ? "0" : "-1");
    el.setAttribute("aria-level", String(node.depth + 1));
    const siblings = node.parent?.children ?? [node];
    el.setAttribute("aria-setsize", String(siblings.length));
    el.setAttribute("aria-posinset", String(siblings.indexOf(node) + 1));
    if (onPath.has(item.id)) el.classList.add("on-path");
    g.append(el);
    if (item.id === look.selected)
      chain = node
        .ancestors()
        .reverse()
        .map((a) => /** @type {Item} */ (a.data));
  }
  return { svg, chain };
}

/** One node: its circle and role glyph, its label and tooltip, and its marks. @param {Item} item @param {number} x @param {number} y @param {Look} look */
function nodeElement(item, x, y, look) {
  const group = document.createElementNS(SVG, "g");
  group.setAttribute("transform", `translate(${y},${x})`);
  group.setAttribute("class", `node ${item.kind}${item.id === look.selected ? " selected" : ""}`);
  group.setAttribute("data-hash", item.id);
  group.setAttribute("role", "treeitem");
  group.setAttribute("aria-selected", String(item.id === look.selected));
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
    group.setAttribute("aria-label", "root");
    group.setAttribute("aria-expanded", "true");
  } else if (item.kind === "more") {
    label.textContent = "more…";
    group.setAttribute("aria-label", "more children");
    glyph.textContent = "+";
  } else if (item.data) {
    const d = item.data;
    group.classList.add(`role-${d.role}`);
    if (d.observations > 0 && d.role === "assistant") group.classList.add("answer");
    if (d.child_count > 0) {
      group.classList.add(item.open ? "open" : "closed");
      group.setAttribute("aria-expanded", String(item.open));
    }
    group.setAttribute("opacity", String(0.35 + 0.65 * freshness(d)));
    if (!FILTERS[look.filter](d)) group.classList.add("dim");
    if (look.matches.has(item.id)) group.classList.add("match");
    group.setAttribute("aria-label", shown(`${d.role}: ${d.preview}`));
    glyph.textContent = ROLE_GLYPH[/** @type {keyof typeof ROLE_GLYPH} */ (d.role)] ?? "?";
    const text = d.preview.length > 27 ? `${d.preview.slice(0, 26)}…` : d.preview;
    const traffic = trafficOf(d);
    label.textContent = shown(traffic > 0 ? `${text}  ·${traffic}` : text);
    title.textContent =
      shown(`${d.role}: ${d.preview}`) + `\nhits ${traffic} · last ${ago(activityOf(d))} · ${d.child_count}${d.child_count >= 1000 ? "+" : ""} children`;
  }
  group.append(title, hit, circle, glyph, label);
  const activate = () => look.activate(item);
  group.addEventListener("click", activate);
  group.addEventListener("keydown", (e) => look.key(item, e));
  return group;
}
