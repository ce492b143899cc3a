// @ts-check
import { api, ApiFailure, session } from "./api.js";
import { BranchView } from "./branch.js";
import { showPath } from "./branch-path.js";
import { el, shown, toast } from "./format.js";
import { openRequest, pathTo } from "./open-request.js";
import { readUrl, writeUrl } from "./url-state.js";
import { showIdentity } from "./identity.js";
import { setupTreeTools } from "./tree-tools.js";
import { openNode } from "./panel.js";
import { setupStalePrune } from "./stale.js";
import { TemplatesPanel } from "./templates.js";
import { TrafficPanel } from "./traffic.js";
import { RequestsPanel } from "./requests.js";
import { filterQuery, loadStats, treeCard } from "./tree-cards.js";

/**
 * @typedef {import("./tree-cards.js").Tree} Tree
 * @typedef {import("./identity.js").Identity} Identity
 */

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @type {{ tree: string | null, current: Tree | null, view: BranchView | null, cursor: string | null, costs: Map<string, number | null>, identity: Identity | null }} */
const state = { tree: null, current: null, view: null, cursor: null, costs: new Map(), identity: null };
const templates = new TemplatesPanel($("templates-pane"));
const traffic = new TrafficPanel($("traffic-pane"));
const requests = new RequestsPanel(
  $("requests-pane"),
  (row) => {
    writeUrl({ tree: row.tree_id, node: null, request: row.request_id });
    void openRequest(opener, row).then(panelShown).catch(fail);
  },
  () => state.tree,
);

/** How a request of the log is opened in the tree (open-request.js). @type {import("./open-request.js").Opener} */
const opener = {
  showTree: async (id) => {
    if (state.tree !== id) await selectTree(await api(`/trees/${id}`), false);
    return state.view;
  },
  panel: $("node-panel"),
  openNode: (hash) =>
    openNode($("node-panel"), hash, { onPruned: () => void (state.current && selectTree(state.current)), onClose: closePanel, onPick: pickNode }),
  onClose: () => closePanel(),
};

function showLogin(message = "") {
  $("login-view").hidden = false;
  $("app-view").hidden = true;
  $("logout").hidden = true;
  $("overall").replaceChildren();
  $("login-error").textContent = message;
}

/** Selects a node the compare view picked: its path opened, its panel shown. @param {string} hash */
function pickNode(hash) {
  void pathTo(hash)
    .then(async (path) => {
      await state.view?.focus(path);
      state.view?.select(hash);
    })
    .catch(fail);
}

/** @param {unknown} error */
function fail(error) {
  if (error instanceof ApiFailure && error.status === 401) return showLogin("That token was refused.");
  toast(error instanceof Error ? error.message : String(error));
}

/** Says who the token is (identity.js). */
async function loadIdentity() {
  state.identity = await showIdentity();
}

/** @param {boolean} more */
async function loadTrees(more = false) {
  if (!more) {
    state.cursor = null;
    await Promise.all([loadStats().then((costs) => (state.costs = costs)), loadIdentity()]);
    // The series span every tenant: only the admin asks for them, and only when the Worker can answer.
    if (state.identity?.role === "admin") {
      traffic.series = state.identity.series ?? null;
      void traffic.load();
    } else $("traffic-pane").hidden = true;
    void requests.load(true).catch(fail);
  }
  const filters = filterQuery(state.identity);
  const page = await api(`/trees?limit=50${filters}${state.cursor ? `&cursor=${encodeURIComponent(state.cursor)}` : ""}`);
  // The first page replaces the list in one step (a live refresh never shows an empty list).
  const cards = page.data.map((/** @type {Tree} */ t) =>
    treeCard(t, {
      active: t.id === state.tree,
      admin: state.identity?.role === "admin",
      cost: state.costs.get(t.id),
      // Opened from the keyboard (a click of detail 0): the focus goes to the tree, not 60 tab stops away.
      onSelect: (e) => void selectTree(t, true, e.detail === 0).catch(fail),
    }),
  );
  if (!more && page.data.length === 0) {
    const filtered = filters !== "";
    const noKeyTrees = state.identity?.role === "tenant" && state.identity.trees === 0;
    if (!noKeyTrees)
      cards.push(
        el("li", { class: "muted empty" }, [
          filtered
            ? "No trees match these filters."
            : "No trees yet. Send traffic through the proxy on any API (/v1/chat/completions, /v1/messages, /v1/responses, Gemini's /v1beta/models/…; npm run traffic does it locally) or import trajectories (POST /api/import).",
        ]),
      );
  }
  if (more) $("tree-list").append(...cards);
  else $("tree-list").replaceChildren(...cards);
  state.cursor = page.next_cursor;
  $("more-trees").hidden = !state.cursor;
}

/** @param {Tree} t @param {boolean} [push] a navigation of its own (a new history entry) @param {boolean} [focus] move the focus to the tree once drawn */
async function selectTree(t, push = true, focus = false) {
  if (push) writeUrl({ tree: t.id, node: null, request: null, search: null });
  state.tree = t.id;
  state.current = t;
  document.body.classList.add("tree-open");
  $("back").hidden = false;
  for (const card of document.querySelectorAll(".tree-card")) card.classList.toggle("active", card.getAttribute("data-tree") === t.id);
  $("branch-title").textContent = shown(`${t.model} · ${t.namespace}`);
  /** @type {HTMLButtonElement} */ ($("stale-open")).disabled = false;
  hidePanel();
  // A prune drops the templates learned from the branch, and the tree card's node count changes: show both at once.
  const onPruned = (/** @type {string} */ hash) => {
    view.remove(hash);
    // "Opened all N nodes." no longer holds.
    $("branch-status").textContent = "";
    closePanel();
    void templates.reload().catch(fail);
    void loadTrees().catch(fail);
  };
  const view = new BranchView($("branch-frame"), t.id, (node) => {
    writeUrl({ node: node.hash, request: null });
    void openNode($("node-panel"), node.hash, { onPruned, onClose: closePanel, onPick: pickNode }).catch(fail);
  });
  view.onPath = showPathBar;
  view.filter = /** @type {import("./branch.js").FilterName} */ (/** @type {HTMLSelectElement} */ ($("branch-filter")).value);
  state.view = view;
  $("branch-tools").hidden = false;
  $("branch-status").textContent = "";
  await Promise.all([view.load(), templates.load(t.id).catch((e) => templates.showError(e))]);
  // A tree whose every node a prune removed is a lone root: say so, rather than draw it unexplained.
  if (state.view === view && view.tree.root.children?.length === 0)
    $("branch-status").textContent = "Nothing is recorded in this tree (a prune removed every node): its next request records its path again.";
  if (focus && state.view === view) /** @type {HTMLElement | null} */ ($("branch-frame").querySelector('[role="treeitem"][tabindex="0"]'))?.focus();
}

/**
 * The breadcrumb from the root to the selected node: the root stays one click away however deep the path.
 * @param {import("./branch-path.js").PathItem[]} chain
 */
function showPathBar(chain) {
  showPath($("branch-path"), chain, {
    onRoot: () => {
      closePanel();
      $("branch-frame").scrollTo(0, 0);
    },
    onSelect: (hash) => state.view?.select(hash),
  });
}

setupTreeTools(
  () => state.view,
  () => state.tree,
  fail,
);

function hidePanel() {
  $("node-panel").hidden = true;
  document.body.classList.remove("panel-open");
}

/** Closes the panel (its close button, Esc): the URL no longer names a node or a request. */
function closePanel() {
  hidePanel();
  writeUrl({ node: null, request: null }, false);
}

/** Marks the panel open (on a phone the tree then shares the screen with it). */
function panelShown() {
  if ($("node-panel").hidden) return;
  document.body.classList.add("panel-open");
  // The tree's frame shrinks beside (or above) the panel: bring the selected node back into its view.
  const selected = $("branch-frame").querySelector(".node.selected");
  if (!selected || typeof selected.scrollIntoView !== "function") return;
  selected.scrollIntoView({ block: "center", inline: "center" });
  // A sheet over the lower half (a phone): lift the page until the node is above it.
  const over = selected.getBoundingClientRect().bottom - $("node-panel").getBoundingClientRect().top + 24;
  if (over > 0) window.scrollBy(0, over);
}

/** Restores the view the URL names: a request of the log, or a tree, its node and its search. */
async function restoreUrl() {
  const url = readUrl();
  if (url.request) {
    const found = await api(`/requests/${encodeURIComponent(url.request)}`).catch(() => null);
    if (found) return openRequest(opener, found.data).then(panelShown);
    // A shared link to a request the log no longer holds (or never did) says so, rather than nothing.
    toast(`No request ${shown(url.request)} in the log: each tree keeps its newest 200 requests.`);
  }
  if (!url.tree) {
    document.body.classList.remove("tree-open", "panel-open");
    return;
  }
  await opener.showTree(url.tree);
  if (url.search) {
    /** @type {HTMLInputElement} */ ($("branch-search")).value = url.search;
    $("search-form").dispatchEvent(new Event("submit", { cancelable: true }));
  }
  if (url.node && state.view) {
    await state.view.focus(await pathTo(url.node));
    await opener.openNode(url.node);
    panelShown();
  } else hidePanel();
}
window.addEventListener("popstate", () => {
  void requests.restore(readUrl()).catch(fail);
  void restoreUrl().catch(fail);
});
document.addEventListener("keydown", (e) => {
  if (e.key !== "Escape" || $("node-panel").hidden || document.querySelector("dialog[open]")) return;
  closePanel();
});

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
    await restoreUrl();
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
setupStalePrune(
  () => state.tree,
  () => {
    void loadTrees().catch(fail);
    void templates.reload().catch(fail);
    if (state.current) void selectTree(state.current).catch(fail);
  },
);

if (session.token) void start();
else showLogin();
