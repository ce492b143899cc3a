// @ts-check
import { api } from "./api.js";
import { ago, compact, dollars, duration, el, percent } from "./format.js";

/**
 * The tree list's parts: the overall stats in the header, the admin's list filters, and one card per tree.
 * @typedef {{ id: string, tenant: string, model: string, namespace: string, tools: string[], node_count: number, hits: number, misses: number,
 *   hit_rate: number | null, prompt_tokens_saved: number, completion_tokens_saved: number, last_hit_at: number | null }} Tree
 * @typedef {import("./identity.js").Identity} Identity
 */

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const NAMESPACE = /^[A-Za-z0-9._:\-/]{1,128}$/;

/**
 * Shows the overall stats in the header; answers the cost each of the top trees saved (null: its model has no price).
 * @returns {Promise<Map<string, number | null>>}
 */
export async function loadStats() {
  const stats = await api("/stats?limit=200");
  const o = stats.overall;
  const stat = (/** @type {string} */ label, /** @type {string} */ value) => el("span", { class: "stat" }, [el("b", {}, [value]), ` ${label}`]);
  $("overall").replaceChildren(
    stat("hit rate", percent(o.hit_rate)),
    stat("hits", compact(o.hits)),
    stat("tokens saved", compact(o.prompt_tokens_saved + o.completion_tokens_saved)),
    stat("saved", o.cost_saved_usd === 0 && o.priced === false ? "no price" : dollars(o.cost_saved_usd)),
    stat("faster", duration(o.latency_saved_ms)),
  );
  // A tree whose model has no price says so, rather than $0.0000.
  return new Map(
    stats.trees.map((/** @type {{ tree_id: string, cost_saved_usd: number, priced: boolean }} */ t) => [
      t.tree_id,
      t.priced === false ? null : t.cost_saved_usd,
    ]),
  );
}

/** The admin's tenant and namespace filters as query parameters (none for a tenant). @param {Identity | null} identity */
export function filterQuery(identity) {
  if (identity?.role !== "admin") return "";
  const tenant = /** @type {HTMLSelectElement} */ ($("filter-tenant")).value;
  const namespace = /** @type {HTMLInputElement} */ ($("filter-namespace")).value.trim();
  return `${tenant ? `&tenant=${tenant}` : ""}${namespace && NAMESPACE.test(namespace) ? `&namespace=${encodeURIComponent(namespace)}` : ""}`;
}

/** @param {number | null | undefined} usd */
function costText(usd) {
  return usd === null ? "no price" : dollars(usd ?? 0);
}

/**
 * A tree's card in the list (a list item holding its button).
 * @param {Tree} t @param {{ active: boolean, admin: boolean, cost: number | null | undefined, onSelect: (e: MouseEvent) => void }} o
 */
export function treeCard(t, o) {
  const tenant = o.admin ? [el("span", { class: "chip tenant", title: `tenant ${t.tenant}` }, [`tenant ${t.tenant.slice(0, 8)}…`])] : [];
  const button = el("button", { class: `tree-card${o.active ? " active" : ""}`, "data-tree": t.id, title: `${t.model} · ${t.namespace}` }, [
    el("div", { class: "tree-title" }, [el("strong", {}, [t.model]), el("span", { class: "ns" }, [t.namespace])]),
    ...(tenant.length ? [el("div", { class: "chips" }, tenant)] : []),
    el(
      "div",
      { class: "chips" },
      t.tools
        .slice(0, 6)
        .map((/** @type {string} */ name) => el("span", { class: "chip" }, [name]))
        .concat(t.tools.length > 6 ? [el("span", { class: "chip" }, [`+${t.tools.length - 6}`])] : []),
    ),
    el("div", { class: "tree-stats" }, [
      el("span", {}, [el("b", {}, [compact(t.node_count)]), " nodes"]),
      el("span", {}, [el("b", {}, [percent(t.hit_rate)]), " hit rate"]),
      el("span", {}, [el("b", {}, [compact(t.hits)]), ` hits · ${compact(t.misses)} misses`]),
      el("span", {}, [el("b", {}, [compact(t.prompt_tokens_saved + t.completion_tokens_saved)]), " tokens saved"]),
      el("span", {}, [el("b", {}, [costText(o.cost)]), " saved"]),
      el("span", {}, ["last hit ", el("b", {}, [ago(t.last_hit_at)])]),
    ]),
  ]);
  button.addEventListener("click", o.onSelect);
  return el("li", {}, [button]);
}
