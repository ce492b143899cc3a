// @ts-check
import { plural } from "./format.js";

/**
 * The preview's sentence. Its template count is the learned templates the Templates panel lists;
 * over all trees it is their sum, which the sentence says (the panel lists one tree's).
 * @param {{ nodes: number, answers: number, templates: number, trees: number }} out @param {boolean} everyTree
 */
export function summaryOf(out, everyTree) {
  const templates =
    everyTree && out.trees > 1 ? `${plural(out.templates, "learned template")} across the ${out.trees} trees` : plural(out.templates, "learned template");
  return `Would remove ${plural(out.nodes, "node")} (${plural(out.answers, "answer")}, ${templates}) in ${plural(out.trees, "tree")}:`;
}
