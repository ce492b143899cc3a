// @ts-check
import { api } from "./api.js";
import { ago, el, plural, toast } from "./format.js";
import { summaryOf } from "./stale-summary.js";

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
  /** The request body, or a sentence saying what to fix. @returns {Record<string, unknown> | string} */
  const criteria = () => {
    /** @type {Record<string, unknown>} */
    const body = {};
    if (days.value !== "") {
      const n = Number(days.value);
      if (!Number.isFinite(n) || n < 0) return "The age must be a number of days, 0 or more.";
      body.older_than_ms = Math.round(n * 86_400_000);
    }
    if (hits.value !== "") {
      const n = Number(hits.value);
      if (!Number.isInteger(n) || n < 1) return "The number of hits must be a whole number, 1 or more.";
      body.min_hits = n;
    }
    if (days.value === "" && hits.value === "") return "Give an age, a number of hits, or both.";
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
    const body = criteria();
    if (typeof body === "string") {
      run.disabled = true;
      preview.replaceChildren(el("p", { class: "error" }, [body]));
      return;
    }
    try {
      const out = await api("/prune", { method: "POST", body: { ...body, dry_run: true } });
      const list = el("ul", { class: "roots" });
      for (const r of out.roots)
        list.append(
          el("li", {}, [
            el("span", { class: `role-chip role-${r.role}` }, [r.role]),
            ` ${r.preview} `,
            el("span", { class: "muted" }, [`· ${r.hits} hits · last ${ago(r.last_hit_at ?? r.created_at)}`]),
          ]),
        );
      preview.replaceChildren(el("p", { class: "summary" }, [out.nodes === 0 ? "Nothing is stale." : summaryOf(out, body.tree_id === undefined)]), list);
      run.disabled = out.nodes === 0;
    } catch (e) {
      preview.replaceChildren(el("p", { class: "error" }, [e instanceof Error ? e.message : String(e)]));
    }
  });
  run.addEventListener("click", async () => {
    const body = criteria();
    if (typeof body === "string") return;
    const out = await api("/prune", { method: "POST", body });
    toast(`Pruned ${plural(out.nodes, "stale node")} (${plural(out.answers, "answer")}, ${plural(out.templates, "template")}).`);
    dialog.close();
    onDone();
  });
}
