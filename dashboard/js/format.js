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

/**
 * Creates an element with attributes and children.
 * @param {string} tag @param {Record<string, string>} [attrs] @param {(Node | string)[]} [children]
 */
export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
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
