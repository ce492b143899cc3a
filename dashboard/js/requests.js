// @ts-check
import { api } from "./api.js";
import { ago, compact, el } from "./format.js";

/**
 * @typedef {{ at: number, tree_id: string | null, route: string, outcome: "hit" | "template" | "miss" | "bypass", status: number,
 *   latency_ms: number, prompt_tokens: number | null, completion_tokens: number | null, node: string | null, template_id: string | null,
 *   reason: string | null, count: number, namespace: string | null, model: string | null }} Recent
 */

const SVG_NS = "http://www.w3.org/2000/svg";
const MINUTES = 30;
const KINDS = /** @type {const} */ (["hit", "template", "miss", "bypass"]);

/** Hits, template hits, misses and bypasses per minute over the last 30 minutes, from the listed requests. @param {Recent[]} rows */
function perMinute(rows) {
  const now = Math.floor(Date.now() / 60_000);
  const steps = Array.from({ length: MINUTES }, (_, i) => ({ minute: now - MINUTES + 1 + i, hit: 0, template: 0, miss: 0, bypass: 0 }));
  for (const r of rows) {
    const i = Math.floor(r.at / 60_000) - (now - MINUTES + 1);
    if (i >= 0 && i < MINUTES) steps[i][r.outcome] += r.count ?? 1;
  }
  return steps;
}

/** @param {Recent[]} rows */
function chart(rows) {
  const steps = perMinute(rows);
  const max = Math.max(1, ...steps.map((s) => s.hit + s.template + s.miss + s.bypass));
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", "requests-chart");
  svg.setAttribute("viewBox", `0 0 ${MINUTES * 10} 50`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Requests per minute, last 30 minutes: hits, template hits, misses, bypasses");
  steps.forEach((s, i) => {
    let y = 50;
    const g = document.createElementNS(SVG_NS, "g");
    const title = document.createElementNS(SVG_NS, "title");
    title.textContent = `${new Date(s.minute * 60_000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}: ${s.hit} hits · ${s.template} template hits · ${s.miss} misses · ${s.bypass} bypasses`;
    g.append(title);
    for (const k of KINDS) {
      if (!s[k]) continue;
      const h = (s[k] / max) * 48;
      y -= h;
      const rect = document.createElementNS(SVG_NS, "rect");
      rect.setAttribute("class", `bar o-${k}`);
      rect.setAttribute("x", String(i * 10 + 1));
      rect.setAttribute("width", "8");
      rect.setAttribute("y", String(y));
      rect.setAttribute("height", String(h));
      g.append(rect);
    }
    svg.append(g);
  });
  return svg;
}

/** The recent-requests view: the caller's last requests (GET /api/requests) and hits and misses per minute. */
export class RequestsPanel {
  /** @param {HTMLElement} root @param {(row: Recent) => void} onOpen */
  constructor(root, onOpen) {
    this.root = root;
    this.onOpen = onOpen;
  }

  async load() {
    /** @type {{ data: Recent[] }} */
    const page = await api("/requests?limit=100");
    const rows = page.data;
    const counts = { hit: 0, template: 0, miss: 0, bypass: 0 };
    for (const r of rows) counts[r.outcome] += r.count ?? 1;
    const list = el("ol", { class: "requests-list" });
    for (const r of rows.slice(0, 12)) {
      // Hits and bypasses of one tree arrive gathered, one row per write with the requests it stands for.
      const many = (r.count ?? 1) > 1;
      const tokens = r.prompt_tokens === null ? "—" : `${compact((r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0))} tok saved`;
      const where = r.tree_id ? `${r.model ?? "?"} · ${r.namespace ?? "?"}` : `not keyed${r.reason ? ` (${r.reason})` : ""}`;
      const item = el(r.tree_id ? "button" : "div", { class: `request o-${r.outcome}`, type: "button", "data-outcome": r.outcome, title: `${many ? `${r.count} requests, the latest ` : ""}${new Date(r.at).toLocaleString()} · ${r.route} · status ${r.status}${r.template_id ? ` · template ${r.template_id}` : ""}${r.node ? ` · node ${r.node}` : ""}` }, [
        el("span", { class: `outcome o-${r.outcome}` }, [many ? `${r.outcome} ×${compact(r.count)}` : r.outcome]),
        el("span", { class: "where" }, [where]),
        el("span", { class: "muted" }, [`${many ? "mean " : ""}${r.latency_ms} ms · ${tokens} · ${ago(r.at)}`]),
      ]);
      if (r.tree_id) item.addEventListener("click", () => this.onOpen(r));
      list.append(el("li", {}, [item]));
    }
    const legend = el("div", { class: "traffic-legend" }, KINDS.map((k) => el("span", {}, [el("i", { class: `o-${k}` }), `${counts[k]} ${k === "template" ? "template hits" : `${k}${k === "miss" ? "es" : k === "bypass" ? "es" : "s"}`}`])));
    this.root.hidden = false;
    this.root.replaceChildren(
      el("div", { class: "pane-head" }, [el("h2", {}, ["Recent requests"]), el("span", { class: "muted small" }, [`last ${rows.reduce((n, r) => n + (r.count ?? 1), 0)}`])]),
      ...(rows.length === 0
        ? [el("p", { class: "muted empty" }, ["No requests yet. They show up here a second after they pass through the proxy."])]
        : [chart(rows), legend, list]),
    );
  }
}
