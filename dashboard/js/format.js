// @ts-check
/** Small formatting helpers shared by the views. */

/** @param {number | null | undefined} ms */
export function ago(ms) {
  if (!ms) return "never";
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/**
 * "1 answer", "2 answers"; `many` for irregular plurals.
 * @param {number} n @param {string} one @param {string} [many]
 */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** @param {number} n */
export function compact(n) {
  return Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 }).format(n);
}

/** @param {number | null} rate */
export function percent(rate) {
  return rate === null ? "–" : `${Math.round(rate * 100)}%`;
}

/** @param {number} usd */
export function dollars(usd) {
  return usd >= 100 ? `$${Math.round(usd)}` : `$${usd.toFixed(usd >= 1 ? 2 : 4)}`;
}

/** @param {number} ms */
export function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 3_600_000) return `${(ms / 1000).toFixed(ms < 60_000 ? 1 : 0)} s`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** Unicode's invisible direction controls (embeddings, overrides, isolates, marks): they reorder what is shown. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Recorded text as shown: each invisible direction control is written as a visible `⟨U+202E⟩`, so that a
 * prompt, tool or model name cannot reorder what the dashboard shows (a reversed `exe.txt`, a call that
 * reads as another) nor the text around it.
 * @param {string} text
 */
export function shown(text) {
  return text.replace(BIDI_CONTROLS, (c) => `⟨U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/**
 * Creates an element with attributes and children. Text children and the `title` and `aria-label`
 * attributes go through `shown` (they may hold recorded text); text is always a text node, never markup.
 * @param {string} tag @param {Record<string, string>} [attrs] @param {(Node | string)[]} [children]
 */
export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, k === "title" || k === "aria-label" ? shown(v) : v);
  for (const c of children) node.append(typeof c === "string" ? shown(c) : c);
  return node;
}

/** @param {string} text */
export function toast(text) {
  const t = /** @type {HTMLElement} */ (document.getElementById("toast"));
  t.textContent = text;
  t.hidden = false;
  clearTimeout(Number(t.dataset.timer));
  t.dataset.timer = String(setTimeout(() => (t.hidden = true), 3500));
}

/**
 * Asks for confirmation in the shared dialog.
 * @param {string} title @param {Node} body @param {string} [action]
 * @returns {Promise<boolean>}
 */
export function confirmDialog(title, body, action = "Prune") {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById("confirm-dialog"));
  /** @type {HTMLElement} */ (document.getElementById("confirm-title")).textContent = title;
  /** @type {HTMLElement} */ (document.getElementById("confirm-body")).replaceChildren(body);
  /** @type {HTMLElement} */ (document.getElementById("confirm-ok")).textContent = action;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true }));
}
