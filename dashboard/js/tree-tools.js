// @ts-check
import { api } from "./api.js";
import { EXPAND_CAP } from "./branch.js";
import { plural } from "./format.js";
import { writeUrl } from "./url-state.js";

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * The branch view's tools: expand all, expand to a depth, collapse, the highlight filter and the search
 * (kept in the URL). Each reports what it did in the status line.
 * @param {() => import("./branch.js").BranchView | null} getView @param {() => string | null} tree @param {(e: unknown) => void} fail
 */
export function setupTreeTools(getView, tree, fail) {
  /** Runs a tree tool and reports what it did. @param {() => Promise<string>} action */
  function tool(action) {
    void action()
      .then((text) => ($("branch-status").textContent = text))
      .catch(fail);
  }

  $("expand-all").addEventListener("click", () =>
    tool(async () => {
      const view = getView();
      if (!view) return "";
      const capped = await view.expandTo(Infinity);
      return capped ? `Opened the first ${EXPAND_CAP} nodes (level by level); open deeper branches one by one.` : `Opened all ${view.count()} nodes.`;
    }),
  );
  $("expand-depth").addEventListener("change", () =>
    tool(async () => {
      const select = /** @type {HTMLSelectElement} */ ($("expand-depth"));
      const depth = Number(select.value);
      select.value = "";
      const view = getView();
      if (!view || !depth) return "";
      view.collapseAll();
      const capped = await view.expandTo(depth);
      return `Opened to depth ${depth}${capped ? ` (stopped at ${EXPAND_CAP} nodes)` : ""}: ${view.count()} nodes.`;
    }),
  );
  $("collapse-all").addEventListener("click", () =>
    tool(async () => {
      getView()?.collapseAll();
      return "";
    }),
  );
  $("branch-filter").addEventListener("change", () => {
    const view = getView();
    if (!view) return;
    view.filter = /** @type {import("./branch.js").FilterName} */ (/** @type {HTMLSelectElement} */ ($("branch-filter")).value);
    view.render();
  });
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    tool(async () => {
      const q = /** @type {HTMLInputElement} */ ($("branch-search")).value.trim();
      const view = getView();
      if (!view || !tree()) return "";
      writeUrl({ search: q || null }, false);
      if (!q) {
        view.matches = new Set();
        view.render();
        return "";
      }
      const found = await api(`/trees/${tree()}/search?q=${encodeURIComponent(q)}&limit=20`);
      await view.reveal(found.data);
      if (found.data.length === 0) return `Nothing in this tree contains “${q}”.`;
      return `${plural(found.data.length, "match", "matches")}${found.truncated ? " (the first 20)" : ""} for “${q}”, opened and outlined; the first is selected.`;
    });
  });
}
