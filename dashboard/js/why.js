// @ts-check
import { api, ApiFailure } from "./api.js";
import { el } from "./format.js";

/**
 * Why a miss missed, in the node panel: where the request left its tree, the new message beside the
 * closest recorded sibling with the differing part highlighted, or the frame field a new tree differs in.
 *
 * @typedef {{ before: string, incoming: string, recorded: string, after: string }} Diff
 * @typedef {{ kind: string, tree_id: string, depth: number, messages: number, template: string | null,
 *   fast_miss?: boolean, answers?: number | null,
 *   divergence: { index: number, role: string, node: string, parent: string, siblings: number,
 *     closest: { node: string, role: string, observations: number } | null, field: string | null, diff: Diff | null } | null,
 *   frame: { nearest_tree: string | null, nearest_model: string | null, field: string | null, diff: Diff | null, trees_compared: number } | null }} Explanation
 */

/**
 * The request's list on the API its route names: `input` (Responses), `contents` (Gemini), else `messages`.
 * @param {string | null | undefined} route
 */
function listOf(route) {
  if (route === "/v1/responses") return "input";
  return route && /^\/(v1beta|v1alpha|v1\/models)\/\*$/.test(route) ? "contents" : "messages";
}

/**
 * The request's item at canonical message `index`, as its API names it: the item the differing `field` names when
 * there is one (`contents[2]`, which the Worker placed exactly). Else Chat Completions and Messages send one item
 * per message, so `messages[index]` is exact; a Responses run of items and consecutive Gemini model contents are one
 * message, so there the item cannot be told from the index: `input[*]`, `contents[*]` (never a guessed index).
 * @param {number} index @param {string | null | undefined} route @param {string | null} [field]
 */
export function itemName(index, route, field = null) {
  const placed = field ? /^(?:messages|input|contents)\[\d+\]/.exec(field) : null;
  if (placed) return placed[0];
  const list = listOf(route);
  return list === "messages" ? `messages[${index}]` : `${list}[*]`;
}

/**
 * One line for the request log (docs/api.md, "Why it missed").
 * @param {Explanation} e @param {string | null} [route] the request's route, which names its API
 */
export function whyLine(e, route) {
  const line = kindLine(e, route);
  return e.fast_miss ? `fast miss (not looked up): ${line}` : line;
}

/** @param {Explanation} e @param {string | null | undefined} route */
function kindLine(e, route) {
  if (e.kind === "new-tree") return e.frame?.field ? `new tree: ${e.frame.field} differs` : "new tree";
  if (e.kind === "new-branch") {
    const d = e.divergence;
    if (d?.field) return `new branch at ${d.field}`;
    // No recorded child to compare: the request went on past where the recorded path ends.
    return d ? `new branch: message ${d.index + 1} goes past the recorded path` : `new branch at depth ${e.depth}`;
  }
  if (e.kind === "unconfirmed") return e.answers === 0 ? "every message recorded, no answer there yet" : "recorded, not served yet";
  if (e.kind === "no-cache") return "the client asked the model";
  return e.kind;
}

/** The diff with one side's differing part marked. @param {Diff} diff @param {"incoming" | "recorded"} side */
export function diffView(diff, side) {
  const part = side === "incoming" ? diff.incoming : diff.recorded;
  return el("pre", { class: `diff ${side}` }, [diff.before, el("mark", {}, [part === "" ? "(nothing)" : part]), diff.after]);
}

/** @param {string} hash */
async function messageOf(hash) {
  try {
    const node = await api(`/nodes/${hash}`);
    return JSON.stringify(node.message, null, 2);
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 404) return null;
    throw e;
  }
}

/** @param {string} title @param {Diff | null} diff @param {"incoming" | "recorded"} side @param {string | null} full @param {string} empty */
function column(title, diff, side, full, empty) {
  return el("div", { class: `compare-side ${side}` }, [
    el("h3", {}, [title]),
    ...(diff ? [diffView(diff, side)] : []),
    ...(full !== null ? [el("pre", { class: "json full" }, [full])] : empty ? [el("p", { class: "muted" }, [empty])] : []),
  ]);
}

/**
 * Fills `panel` with a miss's explanation (`row.explanation`).
 * @param {HTMLElement} panel @param {{ request_id: string | null, status: number, route?: string | null, explanation: Explanation | null }} row @param {{ onClose: () => void }} hooks
 */
export async function openMiss(panel, row, hooks) {
  const e = row.explanation;
  panel.hidden = false;
  const close = el("button", { class: "icon", "aria-label": "Close" }, ["×"]);
  close.addEventListener("click", hooks.onClose);
  const head = el("div", { class: "pane-head" }, [el("h2", {}, ["Why it missed"]), close]);
  if (!e) {
    panel.replaceChildren(head, el("p", { class: "muted" }, ["No explanation was kept for this request (it could not be worked out in time)."]));
    return;
  }
  const facts = el("dl", { class: "facts" }, [
    el("dt", {}, ["request"]),
    el("dd", { class: "request-id" }, [row.request_id ?? "—"]),
    el("dt", {}, ["kind"]),
    el("dd", { id: "why-kind" }, [e.kind]),
    el("dt", {}, ["matched"]),
    el("dd", {}, [`${e.depth} of ${e.messages} messages`]),
    ...(e.fast_miss ? [el("dt", {}, ["looked up"]), el("dd", { id: "why-fast" }, ["no: a fast miss (this isolate knew the path ended there)"])] : []),
    ...(e.kind === "unconfirmed" && typeof e.answers === "number"
      ? [el("dt", {}, ["answers there"]), el("dd", { id: "why-answers" }, [e.answers === 0 ? "none recorded yet" : `${e.answers} recorded, none served`])]
      : []),
    ...(row.status >= 400 ? [el("dt", {}, ["status"]), el("dd", {}, [String(row.status)])] : []),
    ...(e.template ? [el("dt", {}, ["template"]), el("dd", {}, [e.template])] : []),
  ]);
  const parts = [head, facts];
  const d = e.divergence;
  if (d) {
    parts.push(
      el("p", { class: "why-field" }, [
        "First difference: ",
        el("code", { id: "why-field" }, [d.field ?? itemName(d.index, row.route)]),
        d.field
          ? ` · ${d.siblings} recorded ${d.siblings === 1 ? "sibling" : "siblings"} at this fork`
          : ` (message ${d.index + 1} of ${e.messages}): the recorded path ends before it, so there is no recorded message to compare`,
      ]),
    );
    const [mine, theirs] = await Promise.all([messageOf(d.node), d.closest ? messageOf(d.closest.node) : Promise.resolve(null)]);
    parts.push(
      el("div", { class: "compare", id: "why-compare" }, [
        column(
          `This request · ${itemName(d.index, row.route, d.field)} (${d.role})`,
          d.diff,
          "incoming",
          mine,
          "Not recorded (the miss's answer was not stored).",
        ),
        column(
          d.closest ? `Closest recorded sibling${d.closest.observations > 0 ? ` · answered ${d.closest.observations}×` : ""}` : "Recorded",
          d.diff,
          "recorded",
          theirs,
          "Nothing was recorded at this fork.",
        ),
      ]),
    );
  }
  const f = e.frame;
  if (f) {
    parts.push(
      el("p", { class: "why-field" }, [
        f.field
          ? ["Frame field that differs from your nearest tree", f.nearest_model ? ` (${f.nearest_model})` : "", ": "].join("")
          : `No other tree of yours on this API in this namespace to compare (${f.trees_compared} compared).`,
        ...(f.field ? [el("code", { id: "why-field" }, [f.field])] : []),
      ]),
    );
    if (f.diff)
      parts.push(
        el("div", { class: "compare", id: "why-compare" }, [
          column("This request", f.diff, "incoming", null, ""),
          column("Nearest tree", f.diff, "recorded", null, ""),
        ]),
      );
  }
  panel.replaceChildren(...parts);
}
