// @ts-check
import { el } from "./format.js";

/**
 * The path bar: the crumbs from the root to the selected node. A deep path (a long agent run) shows the root, a
 * "… N more" button and the last few crumbs on one line, so that the bar never pushes the branch view off the
 * screen; the button shows the whole path.
 * @typedef {{ id: string, kind: string, data: { role: string, preview: string } | null }} PathItem
 */

/** The crumbs shown before and after the "…" of a deep path. */
const HEAD = 1;
const TAIL = 4;

/**
 * Shows `chain` in `nav`.
 * @param {HTMLElement} nav @param {PathItem[]} chain @param {{ onRoot: () => void, onSelect: (hash: string) => void }} hooks
 * @param {boolean} [whole] every crumb, however deep
 */
export function showPath(nav, chain, hooks, whole = false) {
  const hidden = chain.length - HEAD - TAIL;
  /** @type {Array<PathItem | "more">} */
  const shown = !whole && hidden > 1 ? [...chain.slice(0, HEAD), "more", ...chain.slice(chain.length - TAIL)] : chain;
  nav.replaceChildren();
  shown.forEach((item, i) => {
    if (i > 0) nav.append(el("span", { class: "sep" }, ["›"]));
    if (item === "more") {
      const more = el("button", { type: "button", class: "more", title: `Show the ${hidden} steps between the root and these` }, [`… ${hidden} more`]);
      more.addEventListener("click", () => showPath(nav, chain, hooks, true));
      nav.append(more);
      return;
    }
    const label = item.kind === "root" ? "root" : `${item.data?.role[0].toUpperCase() ?? ""} ${item.data?.preview ?? ""}`;
    const crumb = el("button", { type: "button", title: item.data ? `${item.data.role}: ${item.data.preview}` : "the tree's root", "data-hash": item.id }, [
      label,
    ]);
    crumb.addEventListener("click", () => (item.kind === "root" ? hooks.onRoot() : hooks.onSelect(item.id)));
    nav.append(crumb);
  });
}
