// @ts-check
import { api } from "./api.js";
import { ago, confirmDialog, el, plural, toast } from "./format.js";
import { messageView } from "./message-view.js";
import { showCompare } from "./compare.js";

/** @param {string} raw */
function prettyJson(raw) {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/**
 * The latest selection per panel (a counter): only the answer for the most recent click may fill it,
 * so fast clicks never leave the panel showing an earlier node whose answer arrived last.
 * @type {WeakMap<HTMLElement, number>}
 */
const selections = new WeakMap();

/**
 * Opens one node in the side panel: the full message, its tool calls, the
 * results that answered them (its tool children), counters and a prune button.
 * At a fork, a compare section lists every child with what differs between them (compare.js); `onPick` selects one.
 * @param {HTMLElement} panel @param {string} hash @param {{ onPruned: (hash: string) => void, onClose: () => void, onPick?: (hash: string) => void }} hooks
 */
export async function openNode(panel, hash, hooks) {
  const ticket = (selections.get(panel) ?? 0) + 1;
  selections.set(panel, ticket);
  panel.hidden = false;
  panel.replaceChildren(el("p", { class: "muted" }, ["Loading…"]));
  let node;
  try {
    node = await api(`/nodes/${hash}`);
  } catch (e) {
    if (selections.get(panel) !== ticket) return;
    throw e;
  }
  // A later click owns the panel now: this (late) answer is no longer wanted, whatever its order of arrival.
  if (selections.get(panel) !== ticket) return;
  const view = messageView(node);
  const close = el("button", { class: "icon", "aria-label": "Close" }, ["×"]);
  close.addEventListener("click", hooks.onClose);
  const answer = node.role === "assistant" && node.observations > 0;
  const facts = el("dl", { class: "facts" }, [
    el("dt", {}, ["depth"]),
    el("dd", {}, [String(node.depth)]),
    ...(answer ? [el("dt", {}, ["recorded answer"]), el("dd", {}, [`seen ${node.observations}×`])] : []),
    el("dt", {}, ["hits"]),
    el("dd", {}, [String(node.hits)]),
    el("dt", {}, ["last hit"]),
    el("dd", {}, [ago(node.last_hit_at)]),
    el("dt", {}, ["recorded"]),
    el("dd", {}, [ago(node.created_at)]),
  ]);
  if (answer)
    facts.append(
      el("dt", {}, ["tokens"]),
      el("dd", {}, [`${node.prompt_tokens} in · ${node.completion_tokens} out`]),
      el("dt", {}, ["finish"]),
      el("dd", {}, [node.finish_reason ?? "—"]),
    );
  // Text, calls and results of the message, as its provider viewed it (the node API's `view`).
  const body = el("section", { class: "message" });
  for (const result of view.results)
    body.append(el("p", { class: "muted" }, [`result of ${result.id}`]), el("pre", { class: "content json" }, [prettyJson(result.text)]));
  if (view.texts.length) body.append(el("pre", { class: "content" }, [view.texts.join("\n")]));
  for (const refusal of view.refusals) body.append(el("p", { class: "error" }, [`refusal: ${refusal}`]));
  for (const call of view.calls) {
    body.append(
      el("div", { class: "call" }, [
        el("strong", {}, [`${call.name}()`]),
        el("span", { class: "muted" }, [` ${call.id}`]),
        el("pre", { class: "json" }, [prettyJson(call.args)]),
      ]),
    );
  }
  if (!view.texts.length && !view.calls.length && !view.results.length && !view.refusals.length) body.append(el("p", { class: "muted" }, ["(empty message)"]));
  const results = el("section", { class: "results" });
  if (view.calls.length) void showResults(results, node.tree_id, hash);
  const compare = el("section", { class: "fork-compare", id: "fork-compare" });
  void showCompare(compare, node.tree_id, hash, (h) => hooks.onPick?.(h)).catch((e) =>
    compare.replaceChildren(el("p", { class: "error" }, [e instanceof Error ? e.message : String(e)])),
  );
  const prune = el("button", { class: "danger", id: "prune-node" }, ["Prune this branch"]);
  prune.addEventListener("click", async () => {
    const preview = await api(`/nodes/${hash}/prune`);
    const ok = await confirmDialog("Prune this branch?", pruneSummary(node, preview));
    if (!ok) return;
    const outcome = await api(`/nodes/${hash}`, { method: "DELETE" });
    toast(`Pruned ${plural(outcome.nodes, "node")} (${plural(outcome.answers, "answer")}, ${plural(outcome.templates, "template")}).`);
    hooks.onPruned(hash);
  });
  panel.replaceChildren(
    el("div", { class: "pane-head" }, [el("h2", {}, [el("span", { class: `role-chip role-${node.role}` }, [node.role]), " node"]), close]),
    facts,
    body,
    results,
    compare,
    el("div", { class: "panel-actions" }, [prune]),
    el("p", { class: "hash muted" }, [hash]),
  );
}

/**
 * What a prune of the node takes, from its dry run.
 * @param {{ role: string, depth: number }} node @param {{ nodes: number, answers: number, templates: number }} preview
 */
function pruneSummary(node, preview) {
  return el("div", { class: "prune-summary" }, [
    el("p", {}, [`This removes the ${node.role} node at depth ${node.depth} and everything under it:`]),
    el("ul", {}, [
      el("li", { "data-count": "nodes" }, [plural(preview.nodes, "node")]),
      el("li", { "data-count": "answers" }, [
        `${plural(preview.answers, "recorded answer")} (an identical request no longer finds them: it goes to the model, unless a template learned elsewhere covers it)`,
      ]),
      el("li", { "data-count": "templates" }, [
        preview.templates === 0
          ? "no learned templates (none was learned from this branch; the others keep serving)"
          : `${plural(preview.templates, "learned template")} learned from this branch (the tree's other templates keep serving)`,
      ]),
    ]),
  ]);
}

/** Lists the tool results that answered an assistant's calls (its children). @param {HTMLElement} into @param {string} treeId @param {string} hash */
async function showResults(into, treeId, hash) {
  const page = await api(`/trees/${treeId}/children?parent=${hash}&limit=20`);
  // A result is a tool message, or a user message that carries one (Anthropic tool_result, Gemini functionResponse: its preview starts "[id] ").
  const tools = page.data.filter(
    (/** @type {{ role: string, preview: string }} */ c) => c.role === "tool" || (c.role === "user" && /^\[[^\]\s]+\] /.test(c.preview)),
  );
  if (tools.length === 0) return;
  into.append(el("h3", {}, ["Results"]));
  for (const child of tools) into.append(el("pre", { class: "json result" }, [child.preview]));
  if (page.data.length > tools.length) into.append(el("p", { class: "muted" }, [`and ${page.data.length - tools.length} other children`]));
}
