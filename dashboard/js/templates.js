// @ts-check
import { api } from "./api.js";
import { compact, el } from "./format.js";

/**
 * @typedef {{ type: string, copied: boolean, values: string[], min: string | null, max: string | null }} Slot
 * @typedef {{ id: string, anchor_depth: number, suffix_messages: number, finish_reason: string, bindings: number,
 *   hits: number, confirmed: boolean, refuted: boolean, slots: Slot[] }} Template
 * @typedef {{ tree_id: string, min_bindings: number, data: Template[] }} TemplatePage
 */

/** The frame key under which a declared tree lists its variable names (src/cache/templates/declared.ts). */
const VARIABLES_KEY = "muscle-mem-variables";
/** The APIs whose trees learn templates but never read declared variables (docs/templates.md, "Which APIs"), by the frame's `muscle-mem:api`. */
const UNDECLARED_APIS = { "openai-responses": "OpenAI Responses" };
/** The API lists at most this many templates, newest first. */
const LIST_LIMIT = 100;
/** A template keeps at most this many binding digests (MAX_BINDINGS), so the count stops there. */
const MAX_BINDINGS = 64;
const RANGED = new Set(["number", "date"]);

/** @param {number} n @param {string} one @param {string} [many] */
const plural = (n, one, many = `${one}s`) => `${compact(n)} ${n === 1 ? one : many}`;

/**
 * Where a template stands: serving, refuted, or still learning (and what it lacks).
 * `confirmed` in the API is the serving condition: enough distinct bindings, enough
 * distinct values in every slot, and not refuted.
 * @param {Template} t @param {number} min
 * @returns {{ kind: "serves" | "refuted" | "learning", note: string }}
 */
export function statusOf(t, min) {
  if (t.refuted) return { kind: "refuted", note: "The model once answered differently where it would have served: it never serves again." };
  if (t.confirmed) return { kind: "serves", note: "" };
  if (t.bindings < min) return { kind: "learning", note: `Confirmed by ${t.bindings} of ${min} distinct bindings; serves from ${min}.` };
  const short = t.slots.findIndex((s) => s.values.length < min);
  const seen = short >= 0 ? t.slots[short].values.length : 0;
  return { kind: "learning", note: short >= 0 ? `Slot ${short + 1} has seen ${seen} of ${min} distinct values; serves from ${min}.` : "Not serving yet." };
}

/** @param {Slot} s @param {number} i */
function slotItem(s, i) {
  const head = el("div", { class: "slot-head" }, [
    el("strong", {}, [`slot ${i + 1}`]),
    el("span", { class: `chip type type-${s.type}` }, [s.type]),
    el("span", { class: "muted" }, [s.copied ? "copied into the answer" : "not in the answer"]),
  ]);
  const seen = el("div", { class: "slot-values" });
  if (RANGED.has(s.type) && s.min !== null && s.max !== null) seen.append(el("span", { class: "range" }, [`range ${s.min} – ${s.max}`]));
  seen.append(el("span", { class: "muted" }, [`${plural(s.values.length, "value")} seen:`]));
  for (const v of s.values) seen.append(el("code", { class: "value" }, [v]));
  return el("li", { class: "slot" }, [head, seen]);
}

/** @param {Template} t @param {number} min */
function templateItem(t, min) {
  const status = statusOf(t, min);
  const from = t.anchor_depth + 1;
  const to = t.anchor_depth + t.suffix_messages;
  const facts = el("dl", { class: "facts" }, [
    el("dt", {}, ["bindings"]),
    el("dd", { class: "bindings" }, [`${t.bindings >= MAX_BINDINGS ? `${MAX_BINDINGS}+` : t.bindings} distinct (serves from ${min})`]),
    el("dt", {}, ["hits"]),
    el("dd", { class: "hits" }, [compact(t.hits)]),
    el("dt", {}, ["answers"]),
    el("dd", {}, [t.finish_reason === "tool_calls" ? "with a tool call" : `with text (${t.finish_reason})`]),
    el("dt", {}, ["matches"]),
    el("dd", {}, [from === to ? `the message at depth ${from}` : `messages at depth ${from}–${to}`]),
  ]);
  const slots = el("ul", { class: "slots" }, t.slots.map(slotItem));
  if (t.slots.length === 0) slots.append(el("li", { class: "muted" }, ["no slots: only the skeleton varies"]));
  return el("li", { class: `template ${status.kind}`, "data-template": t.id }, [
    el("div", { class: "template-head" }, [el("span", { class: `badge ${status.kind}` }, [status.kind]), el("span", { class: "note" }, [status.note])]),
    facts,
    slots,
    el("p", { class: "hash muted" }, [t.id]),
  ]);
}

/** @param {string[]} names */
function declaredBlock(names) {
  return el("div", { class: "declared" }, [
    el("h3", {}, ["Declared variables"]),
    el(
      "div",
      { class: "chips" },
      names.map((n) => el("code", { class: "chip variable" }, [`{{${n}}}`])),
    ),
    el("p", { class: "muted" }, [
      "Requests that send these names in the ",
      el("code", {}, ["muscle-mem-bindings"]),
      " header are keyed with placeholders in this tree and answered with their own values (",
      el("code", {}, ["muscle-mem-template: declared"]),
      ").",
    ]),
  ]);
}

/** @param {number} min @param {boolean} declared @param {string | null} apiName an API that never reads declared variables */
function emptyState(min, declared, apiName) {
  const why = declared
    ? [
        "No learned templates in this tree. Its requests are served through the declared variables above; a template is learned here only when values outside them vary.",
      ]
    : [
        `No learned templates yet. A template is learned when two answers of the same shape differ only in data the model copies (ids, emails, numbers, names), and it serves once ${min} distinct bindings have confirmed it. Until then only exact repeats hit.`,
      ];
  const bindings = apiName
    ? el("p", {}, [
        `Declared variables are not read on ${apiName}: the `,
        el("code", {}, ["muscle-mem-bindings"]),
        " header is ignored there (its misses say so in muscle-mem-template-miss), and only learned templates serve new values.",
      ])
    : el("p", {}, [
        "Send the values that change from run to run in the ",
        el("code", {}, ["muscle-mem-bindings"]),
        " header (e.g. ",
        el("code", {}, ['{"order_id":"A-1"}']),
        ") to have such requests cached from the first answer.",
      ]);
  return el("div", { class: "templates-empty" }, [
    ...why.map((text) => el("p", {}, [text])),
    bindings,
    el("p", { class: "muted" }, [
      "Learning is off with ",
      el("code", {}, ["TEMPLATE_INDUCTION=off"]),
      " or the ",
      el("code", {}, ["muscle-mem-induction: off"]),
      " header, and a prune drops a tree's templates (the remaining traffic re-learns them).",
    ]),
  ]);
}

/**
 * The Templates panel of the selected tree: its declared variables (from the
 * tree's frame) and its learned templates with their slots, confirmation and hits.
 */
export class TemplatesPanel {
  /** @param {HTMLElement} section */
  constructor(section) {
    this.section = section;
    /** @type {string | null} */
    this.treeId = null;
    this.count = el("span", { class: "count" });
    this.body = el("div", { class: "templates-body" });
    const refresh = el("button", { class: "ghost small", id: "templates-refresh" }, ["Refresh"]);
    refresh.addEventListener("click", () => void this.reload().catch((e) => this.showError(e)));
    section.replaceChildren(el("div", { class: "pane-head" }, [el("h2", {}, ["Templates ", this.count]), refresh]), this.body);
  }

  /** Shows the templates of `treeId` (a later call wins over an earlier one still loading). @param {string} treeId */
  async load(treeId) {
    this.treeId = treeId;
    this.section.hidden = false;
    this.count.textContent = "";
    this.body.replaceChildren(el("p", { class: "muted" }, ["Loading…"]));
    await this.reload();
  }

  async reload() {
    const treeId = this.treeId;
    if (!treeId) return;
    const [tree, page] = await Promise.all([api(`/trees/${treeId}`), /** @type {Promise<TemplatePage>} */ (api(`/trees/${treeId}/templates`))]);
    if (treeId !== this.treeId) return;
    const variables = Array.isArray(tree.frame?.[VARIABLES_KEY]) ? tree.frame[VARIABLES_KEY].map(String) : [];
    const apiName = Object.hasOwn(UNDECLARED_APIS, tree.frame?.["muscle-mem:api"]) ? UNDECLARED_APIS[tree.frame["muscle-mem:api"]] : null;
    this.render(page, variables, apiName);
  }

  /** @param {TemplatePage} page @param {string[]} variables @param {string | null} [apiName] */
  render(page, variables, apiName = null) {
    const min = page.min_bindings;
    const list = page.data;
    this.count.textContent = String(list.length);
    const parts = variables.length > 0 ? [declaredBlock(variables)] : [];
    if (list.length === 0) {
      this.body.replaceChildren(...parts, emptyState(min, variables.length > 0, apiName));
      return;
    }
    const serving = list.filter((t) => t.confirmed).length;
    const refuted = list.filter((t) => t.refuted).length;
    const summary = `${plural(list.length, "learned template")}${list.length >= LIST_LIMIT ? " (the newest 100)" : ""} · ${serving} serving · ${list.length - serving - refuted} learning · ${refuted} refuted`;
    const rule = "A serving template answers new values of a shape it has seen, numbers and dates only inside the range seen; any doubt is a miss.";
    parts.push(
      el("p", { class: "templates-summary" }, [summary, el("br"), el("span", { class: "muted" }, [rule])]),
      el(
        "ol",
        { class: "template-list" },
        list.map((t) => templateItem(t, min)),
      ),
    );
    this.body.replaceChildren(...parts);
  }

  /** @param {unknown} error */
  showError(error) {
    this.body.replaceChildren(el("p", { class: "error" }, [error instanceof Error ? error.message : String(error)]));
  }

  hide() {
    this.treeId = null;
    this.section.hidden = true;
  }
}
