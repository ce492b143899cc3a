// @ts-check
import { api } from "./api.js";
import { el } from "./format.js";
import { messageView } from "./message-view.js";

/** Context kept each side of the part that differs, and the most of a differing part shown. */
const CONTEXT = 40;
const SHOWN = 160;

/** A node's message as one line of text: its results, text, refusals and calls with their arguments. @param {{ view?: unknown }} node */
export function flatText(node) {
  const v = messageView(node);
  return [...v.results.map((r) => `[${r.id}] ${r.text}`), ...v.texts, ...v.refusals, ...v.calls.map((c) => `${c.name}(${c.args})`)]
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * What differs between sibling texts: the prefix and suffix they all share are cut to CONTEXT
 * characters around each one's own differing middle (at most SHOWN characters).
 * @param {string[]} texts @returns {Array<{ before: string, differs: string, after: string }>}
 */
export function differingParts(texts) {
  if (texts.length === 0) return [];
  const shortest = Math.min(...texts.map((t) => t.length));
  let prefix = 0;
  while (prefix < shortest && texts.every((t) => t[prefix] === texts[0][prefix])) prefix++;
  let suffix = 0;
  while (suffix < shortest - prefix && texts.every((t) => t[t.length - 1 - suffix] === texts[0][texts[0].length - 1 - suffix])) suffix++;
  return texts.map((t) => {
    const middle = t.slice(prefix, t.length - suffix);
    const before = t.slice(0, prefix);
    const after = t.slice(t.length - suffix);
    return {
      before: before.length > CONTEXT ? `…${before.slice(-CONTEXT)}` : before,
      differs: middle.length > SHOWN ? `${middle.slice(0, SHOWN - 1)}…` : middle,
      after: after.length > CONTEXT ? `${after.slice(0, CONTEXT)}…` : after,
    };
  });
}

/**
 * At a fork (two or more children), lists every child (the first 20) with the part of its message that
 * differs from its siblings marked; a click on one selects it.
 * @param {HTMLElement} into @param {string} treeId @param {string} hash @param {(hash: string) => void} onPick
 */
export async function showCompare(into, treeId, hash, onPick) {
  const page = await api(`/trees/${treeId}/children?parent=${hash}&limit=20`);
  if (page.data.length < 2) return;
  /** @type {Array<{ hash: string, role: string, view: unknown }>} */
  const kids = await Promise.all(page.data.map((/** @type {{ hash: string }} */ c) => api(`/nodes/${c.hash}`)));
  const parts = differingParts(kids.map((k) => flatText(k)));
  const list = el("ol", { class: "compare-list" });
  kids.forEach((k, i) => {
    const p = parts[i];
    const pick = el("button", { class: "link compare-pick", "data-hash": k.hash }, [
      el("span", { class: `role-chip role-${k.role}` }, [k.role]),
      " ",
      p.before,
      el("mark", {}, [p.differs || "(same text; other fields differ)"]),
      p.after,
    ]);
    pick.addEventListener("click", () => onPick(k.hash));
    list.append(el("li", {}, [pick]));
  });
  const more = page.next_cursor ? [el("p", { class: "muted" }, ["The first 20 children are compared."])] : [];
  into.replaceChildren(
    el("h3", {}, [`Compare the ${kids.length} children`]),
    el("p", { class: "muted" }, ["What differs between them is marked."]),
    list,
    ...more,
  );
}
