// @ts-check
import { session } from "./api.js";
import { compact, el, percent } from "./format.js";

/**
 * @typedef {{ t: string, hits: number, misses: number, bypasses: number, p50_ms: number | null, p99_ms: number | null }} Point
 * @typedef {{ step_minutes: number, points: Point[] }} Series
 */

const SVG_NS = "http://www.w3.org/2000/svg";
/** The windows the panel offers, in minutes. */
const RANGES = [
  { label: "1 h", minutes: 60 },
  { label: "24 h", minutes: 1440 },
  { label: "7 d", minutes: 10_080 },
];
const KINDS = /** @type {const} */ (["hits", "misses", "bypasses"]);
/** Chart geometry in viewBox units (the SVG scales to the panel's width). */
const W = 300;
const BARS_H = 70;
const LINE_H = 40;

/**
 * Creates an SVG element; text only ever enters through `title` (textContent).
 * @param {string} tag @param {Record<string, string | number>} [attrs] @param {string} [title]
 */
function svg(tag, attrs = {}, title) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (title !== undefined) {
    const t = document.createElementNS(SVG_NS, "title");
    t.textContent = title;
    node.append(t);
  }
  return node;
}

/** @param {string} iso @param {number} stepMinutes */
function when(iso, stepMinutes) {
  const d = new Date(iso);
  return stepMinutes >= 1440 ? d.toLocaleDateString() : d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** @param {number | null} ms */
const ms = (ms) => (ms === null ? "–" : `${ms < 100 ? Number(ms.toFixed(1)) : Math.round(ms)} ms`);

/** @param {Point} p @param {number} step */
function pointTitle(p, step) {
  return `${when(p.t, step)} (${step} min): ${p.hits} hits · ${p.misses} misses · ${p.bypasses} bypasses · p50 ${ms(p.p50_ms)} · p99 ${ms(p.p99_ms)}`;
}

/** Stacked bars of hits, misses and bypasses per step. @param {Series} s */
function barsChart(s) {
  const n = s.points.length;
  const max = Math.max(1, ...s.points.map((p) => p.hits + p.misses + p.bypasses));
  const slot = W / n;
  const chart = svg("svg", {
    class: "traffic-chart bars",
    viewBox: `0 0 ${W} ${BARS_H}`,
    preserveAspectRatio: "none",
    role: "img",
    "aria-label": "Requests per step: hits, misses, bypasses",
  });
  s.points.forEach((p, i) => {
    const group = svg("g", { class: "step", "data-t": p.t }, pointTitle(p, s.step_minutes));
    group.append(svg("rect", { class: "hover", x: i * slot, y: 0, width: slot, height: BARS_H }));
    let y = BARS_H;
    for (const kind of KINDS) {
      const h = (p[kind] / max) * BARS_H;
      if (h <= 0) continue;
      y -= h;
      group.append(svg("rect", { class: `bar ${kind}`, "data-value": p[kind], x: i * slot + slot * 0.1, y, width: Math.max(slot * 0.8, 0.5), height: h }));
    }
    chart.append(group);
  });
  return { chart, max };
}

/** The p50 latency as a line (gaps where a step had no requests). @param {Series} s */
function latencyChart(s) {
  const values = s.points.map((p) => p.p50_ms);
  const max = Math.max(1, ...values.map((v) => v ?? 0));
  const slot = W / s.points.length;
  const chart = svg("svg", {
    class: "traffic-chart latency",
    viewBox: `0 0 ${W} ${LINE_H}`,
    preserveAspectRatio: "none",
    role: "img",
    "aria-label": "p50 latency per step",
  });
  /** @type {string[]} */
  let run = [];
  const flush = () => {
    if (run.length > 0) chart.append(svg("polyline", { class: "p50", points: run.join(" "), "vector-effect": "non-scaling-stroke" }));
    run = [];
  };
  values.forEach((v, i) => {
    if (v === null) return flush();
    const x = (i + 0.5) * slot;
    const y = LINE_H - 2 - (v / max) * (LINE_H - 4);
    run.push(`${x.toFixed(2)},${y.toFixed(2)}`);
    chart.append(
      svg("rect", { class: "hover p50-step", "data-value": v, x: i * slot, y: 0, width: slot, height: LINE_H }, pointTitle(s.points[i], s.step_minutes)),
    );
  });
  flush();
  // A lone step draws as a short dash, not as nothing.
  for (const line of chart.querySelectorAll("polyline")) {
    const pts = line.getAttribute("points") ?? "";
    if (!pts.includes(" ")) {
      const [x, y] = pts.split(",").map(Number);
      line.setAttribute("points", `${(x - slot * 0.4).toFixed(2)},${y} ${(x + slot * 0.4).toFixed(2)},${y}`);
    }
  }
  return { chart, max };
}

/** The dashboard's Traffic panel: `GET /api/series` (admin only) as bars and a p50 line. */
export class TrafficPanel {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.minutes = RANGES[0].minutes;
    /** What the Worker says about its Analytics Engine settings (GET /api/whoami, admin only). @type {{ configured: boolean, setup: string | null } | null} */
    this.series = null;
  }

  /** Loads and draws the series; never throws (errors show in the panel). Unconfigured: the setup note, with no failing call. */
  async load() {
    if (this.series && !this.series.configured) return this.showUnconfigured(this.series.setup ?? "");
    const res = await fetch(`/api/series?minutes=${this.minutes}`, { headers: { authorization: `Bearer ${session.token ?? ""}` } }).catch(() => null);
    const json = res ? await res.json().catch(() => null) : null;
    if (res?.status === 403 || res?.status === 401) {
      // A tenant key: the series cover every tenant, so the panel stays away.
      this.root.hidden = true;
      return;
    }
    this.root.hidden = false;
    if (res?.ok && json) return this.draw(json);
    if (json?.error?.code === "analytics_not_configured") return this.showUnconfigured(String(json.error.message ?? ""));
    this.frame([el("p", { class: "error traffic-error" }, [json?.error?.message ? String(json.error.message) : "The traffic series could not be loaded."])]);
  }

  /** @param {(Node | string)[]} body @param {string} [summary] @param {boolean} [withRanges] */
  frame(body, summary = "", withRanges = true) {
    const ranges = el(
      "div",
      { class: "traffic-ranges", role: "group", "aria-label": "Window" },
      RANGES.map((r) => {
        const b = el(
          "button",
          { class: `ghost small${r.minutes === this.minutes ? " active" : ""}`, type: "button", "aria-pressed": String(r.minutes === this.minutes) },
          [r.label],
        );
        b.addEventListener("click", () => {
          this.minutes = r.minutes;
          void this.load();
        });
        return b;
      }),
    );
    const head = el("div", { class: "pane-head" }, [el("h2", {}, ["Traffic"]), ...(withRanges ? [ranges] : [])]);
    this.root.replaceChildren(head, ...(summary ? [el("p", { class: "traffic-summary" }, [summary])] : []), ...body);
  }

  /** @param {string} message */
  showUnconfigured(message) {
    this.root.hidden = false;
    this.root.classList.add("unconfigured");
    this.frame(
      [
        el("div", { class: "traffic-empty" }, [
          el("p", {}, [
            el("strong", {}, ["Traffic series are not switched on."]),
            " ",
            el("span", { class: "muted" }, ["(For deployments. Locally, Recent requests above shows hits and misses over time.)"]),
          ]),
          el("p", { class: "muted" }, [
            "Hits, misses and latency per step come from Workers Analytics Engine. Set the var ",
            el("code", {}, ["ANALYTICS_ACCOUNT_ID"]),
            " and the secret ",
            el("code", {}, ["ANALYTICS_API_TOKEN"]),
            " (Account Analytics: Read), see docs/deploy.md, “Hit, miss and latency series”. The counters in the header and on each tree work without it.",
          ]),
          el("details", {}, [el("summary", { class: "muted" }, ["What the Worker answered"]), el("p", { class: "muted traffic-reason" }, [message])]),
        ]),
      ],
      "",
      false,
    );
  }

  /** @param {Series} s */
  draw(s) {
    const total = { hits: 0, misses: 0, bypasses: 0 };
    for (const p of s.points) for (const k of KINDS) total[k] += p[k];
    const requests = total.hits + total.misses + total.bypasses;
    const cached = total.hits + total.misses;
    const summary = `${compact(requests)} requests · ${percent(cached > 0 ? total.hits / cached : null)} hit rate · per ${s.step_minutes} min`;
    if (requests === 0) return this.frame([el("p", { class: "muted traffic-none" }, ["No cache traffic in this window yet."])], summary);
    const bars = barsChart(s);
    const line = latencyChart(s);
    const first = s.points[0];
    const last = s.points[s.points.length - 1];
    const legend = el("div", { class: "traffic-legend" }, [...KINDS.map((k) => el("span", {}, [el("i", { class: k }), `${compact(total[k])} ${k}`]))]);
    this.frame(
      [
        el("div", { class: "traffic-axis" }, [el("span", {}, ["requests"]), el("span", {}, [`max ${compact(bars.max)}`])]),
        bars.chart,
        legend,
        el("div", { class: "traffic-axis" }, [el("span", {}, ["p50 latency"]), el("span", {}, [`max ${ms(line.max)}`])]),
        line.chart,
        el("div", { class: "traffic-axis times" }, [el("span", {}, [when(first.t, s.step_minutes)]), el("span", {}, [when(last.t, s.step_minutes)])]),
      ],
      summary,
    );
  }
}
