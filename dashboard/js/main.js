// @ts-check
import { api, ApiFailure, session } from "./api.js";
import { BranchView, EXPAND_CAP } from "./branch.js";
import { ago, compact, dollars, duration, el, percent, plural } from "./format.js";
import { openNode } from "./panel.js";
import { setupStalePrune } from "./stale.js";
import { TemplatesPanel } from "./templates.js";
import { TrafficPanel } from "./traffic.js";
import { RequestsPanel } from "./requests.js";

/**
 * @typedef {{ id: string, tenant: string, model: string, namespace: string, tools: string[], node_count: number, hits: number, misses: number,
 *   hit_rate: number | null, prompt_tokens_saved: number, completion_tokens_saved: number, last_hit_at: number | null }} Tree
 * @typedef {{ role: "admin" | "tenant", tenant?: string, short?: string, trees: number, tenants?: number,
 *   by_tenant?: Array<{ tenant: string, short: string, trees: number }>, series?: { configured: boolean, setup: string | null } }} Identity
 */

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @type {{ tree: string | null, current: Tree | null, view: BranchView | null, cursor: string | null, costs: Map<string, number>, identity: Identity | null }} */
const state = { tree: null, current: null, view: null, cursor: null, costs: new Map(), identity: null };
const NAMESPACE = /^[A-Za-z0-9._:\-/]{1,128}$/;
const templates = new TemplatesPanel($("templates-pane"));
const traffic = new TrafficPanel($("traffic-pane"));
const requests = new RequestsPanel($("requests-pane"), (row) => void openRequest(row).catch(fail));

/** Opens the tree and the node that served a listed request. @param {{ tree_id: string | null, node: string | null }} row */
async function openRequest(row) {
  if (!row.tree_id) return;
  if (state.tree !== row.tree_id) await selectTree(await api(`/trees/${row.tree_id}`));
  if (row.node) await openNode($("node-panel"), row.node, { onPruned: () => void (state.current && selectTree(state.current)), onClose: closePanel });
}

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

/** Says who the token is: the admin (every tenant) or one tenant, and warns when a key has no trees at all. */
async function loadIdentity() {
  /** @type {Identity} */
  const me = await api("/whoami");
  state.identity = me;
  const badge = $("whoami");
  badge.hidden = false;
  badge.className = `whoami ${me.role}${me.role === "tenant" && me.trees === 0 ? " empty" : ""}`;
  badge.textContent = me.role === "admin"
    ? `admin · every tenant · ${plural(me.trees, "tree")} of ${plural(me.tenants ?? 0, "tenant")}`
    : `tenant ${me.short}… · ${plural(me.trees, "tree")}`;
  badge.title = me.role === "admin" ? "Signed in with the admin token: you see every tenant's trees." : `Signed in with an upstream API key: tenant ${me.tenant}, only its own trees.`;
  const empty = me.role === "tenant" && me.trees === 0;
  $("no-trees").hidden = !empty;
  $("no-trees").textContent = empty
    ? "This key has no trees: if you meant the admin token, check it. Any other value is read as an upstream API key, and this one has sent no traffic through the proxy yet."
    : "";
  $("tree-filters").hidden = me.role !== "admin";
  $("stale-all-label").textContent = me.role === "admin" ? "every tenant's trees (admin), not only this one" : "all my trees, not only this one";
  if (me.role === "admin") {
    const select = /** @type {HTMLSelectElement} */ ($("filter-tenant"));
    const chosen = select.value;
    select.replaceChildren(el("option", { value: "" }, [`every tenant (${me.tenants})`]), ...(me.by_tenant ?? []).map((t) => el("option", { value: t.tenant }, [`${t.short}… (${plural(t.trees, "tree")})`])));
    select.value = chosen;
  }
}

/** The admin's tenant and namespace filters as query parameters. */
function filterQuery() {
  if (state.identity?.role !== "admin") return "";
  const tenant = /** @type {HTMLSelectElement} */ ($("filter-tenant")).value;
  const namespace = /** @type {HTMLInputElement} */ ($("filter-namespace")).value.trim();
  return `${tenant ? `&tenant=${tenant}` : ""}${namespace && NAMESPACE.test(namespace) ? `&namespace=${encodeURIComponent(namespace)}` : ""}`;
}

/** @param {Tree} t */
function treeCard(t) {
  const tenant = state.identity?.role === "admin" ? [el("span", { class: "chip tenant", title: `tenant ${t.tenant}` }, [`tenant ${t.tenant.slice(0, 8)}…`])] : [];
  const button = el("button", { class: `tree-card${t.id === state.tree ? " active" : ""}`, "data-tree": t.id, title: `${t.model} · ${t.namespace}` }, [
    el("div", { class: "tree-title" }, [el("strong", {}, [t.model]), el("span", { class: "ns" }, [t.namespace])]),
    ...(tenant.length ? [el("div", { class: "chips" }, tenant)] : []),
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
    await Promise.all([loadStats(), loadIdentity()]);
    // The series span every tenant: only the admin asks for them, and only when the Worker can answer.
    if (state.identity?.role === "admin") {
      traffic.series = state.identity.series ?? null;
      void traffic.load();
    } else $("traffic-pane").hidden = true;
    void requests.load().catch(fail);
  }
  const page = await api(`/trees?limit=50${filterQuery()}${state.cursor ? `&cursor=${encodeURIComponent(state.cursor)}` : ""}`);
  // The first page replaces the list in one step (a live refresh never shows an empty list).
  const cards = page.data.map(treeCard);
  if (!more && page.data.length === 0) {
    const filtered = filterQuery() !== "";
    const noKeyTrees = state.identity?.role === "tenant" && state.identity.trees === 0;
    if (!noKeyTrees) cards.push(el("li", { class: "muted empty" }, [filtered ? "No trees match these filters." : "No trees yet. Send traffic through /v1/chat/completions (npm run traffic does it locally) or import trajectories."]));
  }
  if (more) $("tree-list").append(...cards);
  else $("tree-list").replaceChildren(...cards);
  state.cursor = page.next_cursor;
  $("more-trees").hidden = !state.cursor;
}

/** @param {Tree} t */
async function selectTree(t) {
  state.tree = t.id;
  state.current = t;
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
  view.onPath = showPath;
  view.filter = /** @type {import("./branch.js").FilterName} */ (/** @type {HTMLSelectElement} */ ($("branch-filter")).value);
  state.view = view;
  $("branch-tools").hidden = false;
  $("branch-status").textContent = "";
  await Promise.all([view.load(), templates.load(t.id).catch((e) => templates.showError(e))]);
}

/**
 * The breadcrumb from the root to the selected node: the root stays one click away however deep the path.
 * @param {Array<{ id: string, kind: string, data: { role: string, preview: string } | null }>} chain
 */
function showPath(chain) {
  const nav = $("branch-path");
  nav.replaceChildren();
  chain.forEach((item, i) => {
    if (i > 0) nav.append(el("span", { class: "sep" }, ["›"]));
    const label = item.kind === "root" ? "root" : `${item.data?.role[0].toUpperCase() ?? ""} ${item.data?.preview ?? ""}`;
    const crumb = el("button", { type: "button", title: item.data ? `${item.data.role}: ${item.data.preview}` : "the tree's root", "data-hash": item.id }, [label]);
    crumb.addEventListener("click", () => {
      if (item.kind === "root") {
        closePanel();
        $("branch-frame").scrollTo(0, 0);
      } else state.view?.select(item.id);
    });
    nav.append(crumb);
  });
}

/** Runs a tree tool and reports what it did. @param {() => Promise<string>} action */
function tool(action) {
  void action().then((text) => ($("branch-status").textContent = text)).catch(fail);
}

$("expand-all").addEventListener("click", () => tool(async () => {
  if (!state.view) return "";
  const capped = await state.view.expandTo(Infinity);
  return capped ? `Opened the first ${EXPAND_CAP} nodes (level by level); open deeper branches one by one.` : `Opened all ${state.view.count()} nodes.`;
}));
$("expand-depth").addEventListener("change", () => tool(async () => {
  const select = /** @type {HTMLSelectElement} */ ($("expand-depth"));
  const depth = Number(select.value);
  select.value = "";
  if (!state.view || !depth) return "";
  state.view.collapseAll();
  const capped = await state.view.expandTo(depth);
  return `Opened to depth ${depth}${capped ? ` (stopped at ${EXPAND_CAP} nodes)` : ""}: ${state.view.count()} nodes.`;
}));
$("collapse-all").addEventListener("click", () => tool(async () => {
  state.view?.collapseAll();
  return "";
}));
$("branch-filter").addEventListener("change", () => {
  if (!state.view) return;
  state.view.filter = /** @type {import("./branch.js").FilterName} */ (/** @type {HTMLSelectElement} */ ($("branch-filter")).value);
  state.view.render();
});
$("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  tool(async () => {
    const q = /** @type {HTMLInputElement} */ ($("branch-search")).value.trim();
    if (!state.view || !state.tree) return "";
    if (!q) {
      state.view.matches = new Set();
      state.view.render();
      return "";
    }
    const found = await api(`/trees/${state.tree}/search?q=${encodeURIComponent(q)}&limit=20`);
    await state.view.reveal(found.data);
    if (found.data.length === 0) return `Nothing in this tree contains “${q}”.`;
    return `${plural(found.data.length, "match", "matches")}${found.truncated ? " (the first 20)" : ""} for “${q}”, opened and outlined; the first is selected.`;
  });
});

function closePanel() {
  $("node-panel").hidden = true;
  document.body.classList.remove("panel-open");
}

document.addEventListener("click", (e) => {
  if (e.target instanceof Element && e.target.closest(".node.node") && !$("node-panel").hidden) document.body.classList.add("panel-open");
});

/** Live: while the box is ticked and the tab is visible, the stats, the tree list and the recent requests refresh every 5 s. */
let liveTimer = 0;
function scheduleLive() {
  clearTimeout(liveTimer);
  liveTimer = window.setTimeout(async () => {
    const live = /** @type {HTMLInputElement} */ ($("live")).checked;
    if (live && session.token && document.visibilityState === "visible" && !$("app-view").hidden) {
      await loadTrees().catch(() => undefined);
    }
    scheduleLive();
  }, 5000);
}
$("live").addEventListener("change", () => scheduleLive());

async function start() {
  $("login-view").hidden = true;
  $("app-view").hidden = false;
  $("logout").hidden = false;
  try {
    await loadTrees();
  } catch (e) {
    fail(e);
  }
  scheduleLive();
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
$("filter-tenant").addEventListener("change", () => void loadTrees().catch(fail));
{
  let timer = 0;
  $("filter-namespace").addEventListener("input", () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => void loadTrees().catch(fail), 300);
  });
}
$("more-trees").addEventListener("click", () => void loadTrees(true).catch(fail));
$("back").addEventListener("click", () => {
  document.body.classList.remove("tree-open", "panel-open");
  $("back").hidden = true;
});
setupStalePrune(() => state.tree, () => {
  void loadTrees().catch(fail);
  void templates.reload().catch(fail);
  if (state.current) void selectTree(state.current).catch(fail);
});

if (session.token) void start();
else showLogin();
