// @ts-check

/**
 * The branch view as the ARIA tree widget it says it is: the keys of one tree item and where they
 * move the focus. Pure over the loaded tree (branch-tree.js); branch.js applies the moves.
 * @typedef {import("./branch-tree.js").Item} Item
 * @typedef {{ kind: "focus", id: string } | { kind: "open" | "close" | "activate", item: Item } | null} KeyMove
 */

/** The ids of the drawn items, top to bottom (the root, then each open node's children and its "more…" row). @param {Item} root */
export function visibleOrder(root) {
  /** @type {string[]} */
  const out = [];
  /** @param {Item} item */
  const walk = (item) => {
    out.push(item.id);
    if (!item.open || !item.children) return;
    for (const c of item.children) walk(c);
    if (item.next) out.push(`${item.id}:more`);
  };
  walk(root);
  return out;
}

/**
 * What a key does on a focused item: ArrowDown/ArrowUp the next or previous drawn item, Home/End the
 * first or last, ArrowRight opens a closed node (or goes to its first child), ArrowLeft closes an open
 * one (or goes to its parent), Enter and Space do what a click does. Null: not a tree key.
 * @param {Item} root @param {Item} item @param {string} key @returns {KeyMove}
 */
export function keyMove(root, item, key) {
  const order = visibleOrder(root);
  const at = Math.max(0, order.indexOf(item.id));
  const openable = item.kind === "root" || (item.data !== null && item.data.child_count > 0);
  switch (key) {
    case "ArrowDown":
      return { kind: "focus", id: order[Math.min(order.length - 1, at + 1)] };
    case "ArrowUp":
      return { kind: "focus", id: order[Math.max(0, at - 1)] };
    case "Home":
      return { kind: "focus", id: order[0] };
    case "End":
      return { kind: "focus", id: order[order.length - 1] };
    case "ArrowRight":
      if (!openable || item.kind === "more") return null;
      if (!item.open || !item.children) return { kind: "open", item };
      return item.children[0] ? { kind: "focus", id: item.children[0].id } : null;
    case "ArrowLeft":
      if (openable && item.open && item.kind === "node") return { kind: "close", item };
      return item.parent ? { kind: "focus", id: item.parent.id } : null;
    case "Enter":
    case " ":
      return { kind: "activate", item };
    default:
      return null;
  }
}
