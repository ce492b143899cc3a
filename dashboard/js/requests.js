// @ts-check
import { api } from "./api.js";
import { ago, compact, el } from "./format.js";
import { KINDS, requestsChart } from "./requests-chart.js";
import { downloadRows } from "./requests-export.js";
import { readUrl, writeUrl } from "./url-state.js";
import { whyLine } from "./why.js";

/**
 * @typedef {{ at: number, tree_id: string | null, route: string, outcome: "hit" | "template" | "miss" | "bypass", status: number,
 *   latency_ms: number, prompt_tokens: number | null, completion_tokens: number | null, node: string | null, template_id: string | null,
 *   reason: string | null, count: number, namespace: string | null, model: string | null, request_id: string | null,
 *   explanation: import("./why.js").Explanation | null, error: string | null }} Recent
 */

const PAGE = 50;
/** @type {Record<string, number>} */
const SINCE = { "15m": 15 * 60_000, "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000 };
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** A row's label: the outcome, or `error <status>` for any status of 400 or more (the outcome stays in the title). @param {Recent} r */
export function outcomeLabel(r) {
  if (r.status >= 400) return `error ${r.status}`;
  return (r.count ?? 1) > 1 ? `${r.outcome} ×${compact(r.count)}` : r.outcome;
}

/**
 * The request log (GET /api/requests): filters by outcome, model, time and this tree, search by request id,
 * paging over the whole retained log, CSV and JSON export of what is filtered. A row opens its request.
 */
export class RequestsPanel {
  /** @param {HTMLElement} root @param {(row: Recent) => void} onOpen @param {() => string | null} currentTree */
  constructor(root, onOpen, currentTree) {
    this.root = root;
    this.onOpen = onOpen;
    this.currentTree = currentTree;
    /** @type {Recent[]} */
    this.rows = [];
    /** @type {string | null} */
    this.next = null;
    this.form = this.filtersForm();
    this.count = el("span", { class: "muted small", id: "requests-count" });
    this.body = el("div", { class: "requests-body" });
    this.moreButton = el("button", { class: "ghost small", id: "log-more", type: "button", hidden: "" }, ["Older requests"]);
    this.moreButton.addEventListener("click", () => void this.more());
    const csv = el("button", { class: "ghost small", id: "log-csv", type: "button" }, ["Export CSV"]);
    const json = el("button", { class: "ghost small", id: "log-json", type: "button" }, ["Export JSON"]);
    csv.addEventListener("click", () => void this.exportAs("csv"));
    json.addEventListener("click", () => void this.exportAs("json"));
    this.root.replaceChildren(
      el("div", { class: "pane-head" }, [el("h2", {}, ["Requests"]), this.count]),
      this.form,
      this.body,
      el("div", { class: "requests-actions" }, [this.moreButton, csv, json]),
    );
  }

  /** The filter controls, set from the URL. */
  filtersForm() {
    const url = readUrl();
    const outcome = el(
      "select",
      { id: "log-outcome", "aria-label": "Outcome" },
      [
        ["", "every outcome"],
        ["hit", "hits"],
        ["template", "template hits"],
        ["miss", "misses"],
        ["bypass", "bypasses"],
        ["error", "errors"],
      ].map(([v, t]) => el("option", { value: v }, [t])),
    );
    const since = el(
      "select",
      { id: "log-since", "aria-label": "Time" },
      [
        ["", "any time"],
        ["15m", "last 15 min"],
        ["1h", "last hour"],
        ["24h", "last 24 h"],
        ["7d", "last 7 days"],
      ].map(([v, t]) => el("option", { value: v }, [t])),
    );
    const model = el("input", { id: "log-model", type: "search", placeholder: "model", "aria-label": "Model", autocomplete: "off" });
    const q = el("input", { id: "log-q", type: "search", placeholder: "request id", "aria-label": "Search by request id", autocomplete: "off" });
    const here = el("input", { id: "log-here", type: "checkbox" });
    /** @type {HTMLSelectElement} */ (outcome).value = url.outcome;
    /** @type {HTMLSelectElement} */ (since).value = url.since;
    /** @type {HTMLInputElement} */ (model).value = url.model;
    /** @type {HTMLInputElement} */ (q).value = url.q;
    /** @type {HTMLInputElement} */ (here).checked = url.here;
    const form = el("form", { class: "requests-filters", role: "search" }, [outcome, since, model, q, el("label", { class: "inline" }, [here, " this tree"])]);
    let timer = 0;
    const changed = () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => {
        writeUrl(this.filterValues(), false);
        void this.load();
      }, 250);
    };
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", (e) => e.preventDefault());
    return form;
  }

  /** The filters as the URL keeps them. */
  filterValues() {
    const value = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (this.form.querySelector(`#${id}`)).value.trim();
    return {
      outcome: value("log-outcome"),
      since: value("log-since"),
      model: value("log-model"),
      q: value("log-q"),
      here: /** @type {HTMLInputElement} */ (this.form.querySelector("#log-here")).checked,
    };
  }

  /** Sets the filters (a restored URL) and reloads. @param {import("./url-state.js").UrlView} view */
  async restore(view) {
    const set = (/** @type {string} */ id, /** @type {string} */ v) => /** @type {HTMLInputElement} */ ((this.form.querySelector(`#${id}`).value = v));
    set("log-outcome", view.outcome);
    set("log-since", view.since);
    set("log-model", view.model);
    set("log-q", view.q);
    /** @type {HTMLInputElement} */ (this.form.querySelector("#log-here")).checked = view.here;
    await this.load();
  }

  /** The API query of the filters (without cursor). */
  query() {
    const f = this.filterValues();
    const p = new URLSearchParams();
    if (f.outcome) p.set("outcome", f.outcome);
    if (f.model) p.set("model", f.model);
    if (f.since && SINCE[f.since]) p.set("since", String(Date.now() - SINCE[f.since]));
    if (f.q && REQUEST_ID.test(f.q)) p.set("q", f.q);
    const tree = this.currentTree();
    if (f.here && tree) p.set("tree", tree);
    return p;
  }

  /** The first page (a live refresh leaves a log paged further alone). @param {boolean} [live] */
  async load(live = false) {
    if (live && this.rows.length > PAGE) return;
    const p = this.query();
    p.set("limit", String(PAGE));
    const page = await api(`/requests?${p}`);
    this.rows = page.data;
    this.next = page.next_cursor;
    this.render();
  }

  /** The next page, added below. */
  async more() {
    if (!this.next) return;
    const p = this.query();
    p.set("limit", String(PAGE));
    p.set("cursor", this.next);
    const page = await api(`/requests?${p}`);
    this.rows = [...this.rows, ...page.data];
    this.next = page.next_cursor;
    this.render();
  }

  /** Every row the filters select (page by page), downloaded as CSV or JSON. @param {"csv" | "json"} format */
  async exportAs(format) {
    /** @type {Recent[]} */
    const all = [];
    /** @type {string | null} */
    let cursor = null;
    do {
      const p = this.query();
      p.set("limit", "200");
      if (cursor) p.set("cursor", cursor);
      const page = await api(`/requests?${p}`);
      all.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor && all.length < 50_000);
    downloadRows(all, format);
  }

  render() {
    this.root.hidden = false;
    const rows = this.rows;
    const requests = rows.reduce((n, r) => n + (r.count ?? 1), 0);
    this.count.textContent = `${rows.length} rows · ${compact(requests)} requests${this.next ? " (more below)" : ""}`;
    this.moreButton.hidden = !this.next;
    if (rows.length === 0) {
      this.body.replaceChildren(
        el("p", { class: "muted empty" }, [
          this.query().toString() ? "No request matches these filters." : "No requests yet. They show up here a second after they pass through the proxy.",
        ]),
      );
      return;
    }
    const counts = { hit: 0, template: 0, miss: 0, bypass: 0 };
    let errors = 0;
    for (const r of rows) {
      counts[r.outcome] += r.count ?? 1;
      if (r.status >= 400) errors += r.count ?? 1;
    }
    const legend = el("div", { class: "traffic-legend" }, [
      ...KINDS.map((k) =>
        el("span", {}, [
          el("i", { class: `o-${k}` }),
          `${counts[k]} ${k === "template" ? "template hits" : `${k}${k === "miss" || k === "bypass" ? "es" : "s"}`}`,
        ]),
      ),
      el("span", {}, [el("i", { class: "o-error" }), `${errors} errors`]),
    ]);
    this.body.replaceChildren(
      requestsChart(rows),
      legend,
      el(
        "ol",
        { class: "requests-list" },
        rows.map((r) => el("li", {}, [this.rowItem(r)])),
      ),
    );
  }

  /** @param {Recent} r */
  rowItem(r) {
    const many = (r.count ?? 1) > 1;
    const error = r.status >= 400;
    const tokens = r.prompt_tokens === null ? "" : ` · ${compact((r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0))} tok saved`;
    const where = r.tree_id
      ? r.model
        ? `${r.model} · ${r.namespace ?? ""}`
        : `${r.route} · tree not recorded`
      : `not keyed${r.reason ? ` (${r.reason})` : ""}`;
    const why = [
      r.error ? `“${r.error}”` : "",
      r.explanation ? whyLine(r.explanation, r.route) : r.outcome === "bypass" && r.reason ? `bypass: ${r.reason}` : "",
    ]
      .filter(Boolean)
      .join(" · ");
    const title = `${many ? `${r.count} requests, the latest ` : ""}${new Date(r.at).toLocaleString()} · ${r.route} · ${r.outcome} · status ${r.status}${r.request_id ? ` · request ${r.request_id}` : ""}${r.template_id ? ` · template ${r.template_id}` : ""}${r.node ? ` · node ${r.node}` : ""}`;
    const item = el(
      r.tree_id ? "button" : "div",
      {
        class: `request o-${error ? "error" : r.outcome}`,
        type: "button",
        "data-outcome": error ? "error" : r.outcome,
        "data-request": r.request_id ?? "",
        title,
      },
      [
        el("span", { class: `outcome o-${error ? "error" : r.outcome}` }, [outcomeLabel(r)]),
        el("span", { class: "where" }, [where]),
        el("span", { class: "muted" }, [`${many ? "mean " : ""}${r.latency_ms} ms${tokens} · ${ago(r.at)}${why ? ` · ${why}` : ""}`]),
      ],
    );
    if (r.tree_id) item.addEventListener("click", () => this.onOpen(r));
    return item;
  }
}
