// @ts-check
/** The request log's chart: hits, template hits, misses and bypasses per minute over the last 30 minutes. */

/** @typedef {import("./requests.js").Recent} Recent */

const SVG_NS = "http://www.w3.org/2000/svg";
const MINUTES = 30;
export const KINDS = /** @type {const} */ (["hit", "template", "miss", "bypass"]);

/** @param {Recent[]} rows @param {number} now */
function perMinute(rows, now) {
  const minute = Math.floor(now / 60_000);
  const steps = Array.from({ length: MINUTES }, (_, i) => ({ minute: minute - MINUTES + 1 + i, hit: 0, template: 0, miss: 0, bypass: 0 }));
  for (const r of rows) {
    const i = Math.floor(r.at / 60_000) - (minute - MINUTES + 1);
    if (i >= 0 && i < MINUTES) steps[i][r.outcome] += r.count ?? 1;
  }
  return steps;
}

/** @param {Recent[]} rows @param {number} [now] */
export function requestsChart(rows, now = Date.now()) {
  const steps = perMinute(rows, now);
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
