// @ts-check
import { api, ApiFailure, session } from "./api.js";
import { BranchView } from "./branch.js";
import { ago, compact, dollars, duration, el, percent } from "./format.js";
import { openNode } from "./panel.js";
import { setupStalePrune } from "./stale.js";
import { TemplatesPanel } from "./templates.js";
import { TrafficPanel } from "./traffic.js";

/**
 * @typedef {{ id: string, model: string, namespace: string, tools: string[], node_count: number, hits: number, misses: number,
 *   hit_rate: number | null, prompt_tokens_saved: number, completion_tokens_saved: number, last_hit_at: number | null }} Tree
 */

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @type {{ tree: string | null, view: BranchView | null, cursor: string | null, costs: Map<string, number> }} */
const state = { tree: null, view: null, cursor: null, costs: new Map() };
const templates = new TemplatesPanel($("templates-pane"));
const traffic = new TrafficPanel($("traffic-pane"));

function showLogin(message = "") {
  $("login-view").hidden = false;
  $("app-view").hidden = true;
  $("logout").hidden = true;
  $("overall").replaceChildren();
  $("login-error").textContent = message;
}

/** @param {unknown} error */
function fail(error) {
  if (error instanceof ApiFailure && error.status === 401) return showLogin("That token was refused.");
  alert(error instanceof Error ? error.message : String(error));
}

async function loadStats() {
  const stats = await api("/stats?limit=200");
  state.costs = new Map(stats.trees.map((/** @type {{ tree_id: string, cost_saved_usd: number }} */ t) => [t.tree_id, t.cost_saved_usd]));
  const o = stats.overall;
  const stat = (/** @type {string} */ label, /** @type {string} */ value) => el("span", { class: "stat" }, [el("b", {}, [value]), ` ${label}`]);
  $("overall").replaceChildren(
    stat("hit rate", percent(o.hit_rate)),
    stat("hits", compact(o.hits)),
    stat("tokens saved", compact(o.prompt_tokens_saved + o.completion_tokens_saved)),
    stat("saved", dollars(o.cost_saved_usd)),
    stat("faster", duration(o.latency_saved_ms)),
  );
}

/** @param {Tree} t */
function treeCard(t) {
  const button = el("button", { class: `tree-card${t.id === state.tree ? " active" : ""}`, "data-tree": t.id }, [
    el("div", { class: "tree-title" }, [el("strong", {}, [t.model]), el("span", { class: "ns" }, [t.namespace])]),
    el("div", { class: "chips" }, t.tools.slice(0, 6).map((/** @type {string} */ name) => el("span", { class: "chip" }, [name])).concat(t.tools.length > 6 ? [el("span", { class: "chip" }, [`+${t.tools.length - 6}`])] : [])),
    el("div", { class: "tree-stats" }, [
      el("span", {}, [el("b", {}, [compact(t.node_count)]), " nodes"]),
      el("span", {}, [el("b", {}, [percent(t.hit_rate)]), " hit rate"]),
      el("span", {}, [el("b", {}, [compact(t.hits)]), ` hits · ${compact(t.misses)} misses`]),
      el("span", {}, [el("b", {}, [compact(t.prompt_tokens_saved + t.completion_tokens_saved)]), " tokens saved"]),
      el("span", {}, [el("b", {}, [dollars(state.costs.get(t.id) ?? 0)]), " saved"]),
      el("span", {}, ["last hit ", el("b", {}, [ago(t.last_hit_at)])]),
    ]),
  ]);
  button.addEventListener("click", () => void selectTree(t).catch(fail));
  return el("li", {}, [button]);
}

/** @param {boolean} more */
async function loadTrees(more = false) {
  if (!more) {
    state.cursor = null;
    $("tree-list").replaceChildren();
    void traffic.load();
    await loadStats();
  }
  const page = await api(`/trees?limit=50${state.cursor ? `&cursor=${encodeURIComponent(state.cursor)}` : ""}`);
  for (const t of page.data) $("tree-list").append(treeCard(t));
  if (!more && page.data.length === 0) $("tree-list").append(el("li", { class: "muted empty" }, ["No trees yet. Send traffic through /v1/chat/completions or import trajectories."]));
  state.cursor = page.next_cursor;
  $("more-trees").hidden = !state.cursor;
}

/** @param {Tree} t */
async function selectTree(t) {
  state.tree = t.id;
  document.body.classList.add("tree-open");
  $("back").hidden = false;
  for (const card of document.querySelectorAll(".tree-card")) card.classList.toggle("active", card.getAttribute("data-tree") === t.id);
  $("branch-title").textContent = `${t.model} · ${t.namespace}`;
  /** @type {HTMLButtonElement} */ ($("stale-open")).disabled = false;
  closePanel();
  // A prune drops the templates learned from the branch, and the tree card's node count changes: show both at once.
  const onPruned = (/** @type {string} */ hash) => {
    view.remove(hash);
    closePanel();
    void templates.reload().catch(fail);
    void loadTrees().catch(fail);
  };
  const view = new BranchView($("branch-frame"), t.id, (node) => void openNode($("node-panel"), node.hash, { onPruned, onClose: closePanel }).catch(fail));
  state.view = view;
  await Promise.all([view.load(), templates.load(t.id).catch((e) => templates.showError(e))]);
}

function closePanel() {
  $("node-panel").hidden = true;
  document.body.classList.remove("panel-open");
}

document.addEventListener("click", (e) => {
  if (e.target instanceof Element && e.target.closest(".node.node") && !$("node-panel").hidden) document.body.classList.add("panel-open");
});

async function start() {
  $("login-view").hidden = true;
  $("app-view").hidden = false;
  $("logout").hidden = false;
  try {
    await loadTrees();
  } catch (e) {
    fail(e);
  }
}

$("login-form").addEventListener("submit", (e) => {
  e.preventDefault();
  session.token = /** @type {HTMLInputElement} */ ($("token")).value.trim();
  void start();
});
$("logout").addEventListener("click", () => {
  session.token = null;
  location.reload();
});
$("refresh").addEventListener("click", () => void loadTrees().catch(fail));
$("more-trees").addEventListener("click", () => void loadTrees(true).catch(fail));
$("back").addEventListener("click", () => {
  document.body.classList.remove("tree-open", "panel-open");
  $("back").hidden = true;
});
setupStalePrune(() => state.tree, () => {
  void loadTrees().catch(fail);
  void templates.reload().catch(fail);
  if (state.tree && state.view) void state.view.load.call(new BranchView($("branch-frame"), state.tree, state.view.onSelect)).catch(fail);
});

if (session.token) void start();
else showLogin();
