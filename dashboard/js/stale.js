// @ts-check
import { api } from "./api.js";
import { ago, el, toast } from "./format.js";

/**
 * The stale-prune dialog: a dry run shows what would go, then the prune runs
 * the same criteria.
 * @param {() => string | null} currentTree @param {() => void} onDone
 */
export function setupStalePrune(currentTree, onDone) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById("stale-dialog"));
  const days = /** @type {HTMLInputElement} */ (document.getElementById("stale-days"));
  const hits = /** @type {HTMLInputElement} */ (document.getElementById("stale-hits"));
  const all = /** @type {HTMLInputElement} */ (document.getElementById("stale-all"));
  const preview = /** @type {HTMLElement} */ (document.getElementById("stale-preview"));
  const run = /** @type {HTMLButtonElement} */ (document.getElementById("stale-run"));
  const criteria = () => {
    /** @type {Record<string, unknown>} */
    const body = {};
    if (days.value !== "") body.older_than_ms = Math.round(Number(days.value) * 86_400_000);
    if (hits.value !== "") body.min_hits = Number(hits.value);
    const tree = currentTree();
    if (!all.checked && tree) body.tree_id = tree;
    return body;
  };
  const reset = () => {
    run.disabled = true;
    preview.replaceChildren();
  };
  for (const input of [days, hits, all]) input.addEventListener("input", reset);
  /** @type {HTMLButtonElement} */ (document.getElementById("stale-open")).addEventListener("click", () => {
    reset();
    dialog.showModal();
  });
  /** @type {HTMLButtonElement} */ (document.getElementById("stale-preview-btn")).addEventListener("click", async () => {
    try {
      const out = await api("/prune", { method: "POST", body: { ...criteria(), dry_run: true } });
      const list = el("ul", { class: "roots" });
      for (const r of out.roots) list.append(el("li", {}, [el("span", { class: `role-chip role-${r.role}` }, [r.role]), ` ${r.preview} `, el("span", { class: "muted" }, [`· ${r.hits} hits · last ${ago(r.last_hit_at ?? r.created_at)}`])]));
      preview.replaceChildren(
        el("p", { class: "summary" }, [out.nodes === 0 ? "Nothing is stale." : `Would remove ${out.nodes} nodes (${out.answers} answers) in ${out.trees} tree${out.trees === 1 ? "" : "s"}:`]),
        list,
      );
      run.disabled = out.nodes === 0;
    } catch (e) {
      preview.replaceChildren(el("p", { class: "error" }, [e instanceof Error ? e.message : String(e)]));
    }
  });
  run.addEventListener("click", async () => {
    const out = await api("/prune", { method: "POST", body: criteria() });
    toast(`Pruned ${out.nodes} stale nodes (${out.answers} answers).`);
    dialog.close();
    onDone();
  });
}
