import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DECLARED_ANCHOR, recordDeclaredEvidence } from "../../src/store/templates/declared";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { api, learn, newKey, ok, onlyTree, type NodeSummary } from "./api-helpers";
import { chat, eventually, uniqueModel } from "./helpers";

interface TemplateSummary {
  id: string;
  confirmed: boolean;
  slots: Array<{ values: string[] }>;
}
interface Outcome {
  nodes: number;
  answers: number;
  templates: number;
}

const refund = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });
const cancel = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Cancel order #${order} now` }] });

/** One tree with two confirmed template families (refund, cancel) and a plain branch that taught nothing. */
async function twoFamilies(): Promise<{ key: string; model: string; treeId: string; templates: TemplateSummary[]; users: NodeSummary[] }> {
  const key = newKey();
  const model = uniqueModel("prune-tpl");
  for (const order of ["A-1", "B-22", "C-333"]) await learn(refund(model, order), key);
  for (const order of ["D-4", "E-55", "F-666"]) await learn(cancel(model, order), key);
  await learn({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: "hello there" }] }, key);
  const tree = await onlyTree(key);
  let templates: TemplateSummary[] = [];
  await eventually(async () => {
    templates = (await ok<{ data: TemplateSummary[] }>(api(`/trees/${tree.id}/templates`, { token: key }))).data;
    return templates.filter((t) => t.confirmed).length >= 2;
  });
  const users = (await ok<{ data: NodeSummary[] }>(api(`/trees/${tree.id}/children`, { token: key }))).data;
  return { key, model, treeId: tree.id, templates, users };
}

const familyOf = (t: TemplateSummary) =>
  t.slots.some((s) => s.values.includes("A-1")) ? "refund" : t.slots.some((s) => s.values.includes("D-4")) ? "cancel" : "other";

describe("a prune takes only the templates whose evidence it removes", () => {
  it("Should keep every template when the pruned branch taught none, and say so in the preview", async () => {
    const { key, model, treeId, templates, users } = await twoFamilies();
    const hello = users.find((u) => u.preview.includes("hello there"));
    const preview = await ok<Outcome & { dry_run: boolean }>(api(`/nodes/${hello?.hash}/prune`, { token: key }));
    expect(preview).toMatchObject({ dry_run: true, nodes: 2, answers: 1, templates: 0 });
    expect(await ok<Outcome>(api(`/nodes/${hello?.hash}`, { token: key, method: "DELETE" }))).toMatchObject({ nodes: 2, answers: 1, templates: 0 });
    const after = (await ok<{ data: TemplateSummary[] }>(api(`/trees/${treeId}/templates`, { token: key }))).data;
    expect(after.map((t) => t.id).sort()).toEqual(templates.map((t) => t.id).sort());
    // A new order is still served by the refund template.
    const fourth = await chat(refund(model, "G-7777"), { key });
    await fourth.arrayBuffer();
    expect(fourth.headers.get("muscle-mem-cache")).toBe("hit");
    expect(fourth.headers.get("muscle-mem-template")).toBeTruthy();
  });

  it("Should drop the templates learned from the pruned branch and keep the other family serving", async () => {
    const { key, model, treeId, templates, users } = await twoFamilies();
    const cancelTemplates = templates.filter((t) => familyOf(t) === "cancel");
    expect(cancelTemplates.length).toBeGreaterThan(0);
    const d4 = users.find((u) => u.preview.includes("#D-4"));
    const preview = await ok<Outcome>(api(`/nodes/${d4?.hash}/prune`, { token: key }));
    expect(preview).toMatchObject({ nodes: 2, answers: 1, templates: cancelTemplates.length });
    // The preview only reads.
    expect((await ok<{ data: TemplateSummary[] }>(api(`/trees/${treeId}/templates`, { token: key }))).data).toHaveLength(templates.length);
    const pruned = await ok<Outcome>(api(`/nodes/${d4?.hash}`, { token: key, method: "DELETE" }));
    expect(pruned).toMatchObject({ nodes: 2, answers: 1, templates: cancelTemplates.length });
    const after = (await ok<{ data: TemplateSummary[] }>(api(`/trees/${treeId}/templates`, { token: key }))).data;
    expect(after.map(familyOf)).not.toContain("cancel");
    expect(after.map((t) => t.id).sort()).toEqual(
      templates
        .filter((t) => familyOf(t) !== "cancel")
        .map((t) => t.id)
        .sort(),
    );
    const fourth = await chat(refund(model, "G-7777"), { key });
    await fourth.arrayBuffer();
    expect(fourth.headers.get("muscle-mem-cache")).toBe("hit");
    // The tree's node count follows the prune.
    expect((await onlyTree(key)).node_count).toBe(users.length * 2 - 2);
  });

  it("Should take the templates of every removed answer in a stale prune too, and count them in its dry run", async () => {
    const { key, treeId, templates } = await twoFamilies();
    const dry = await ok<Outcome>(api("/prune", { token: key, method: "POST", body: { tree_id: treeId, older_than_ms: 0, dry_run: true } }));
    expect(dry.templates).toBe(templates.length);
    const done = await ok<Outcome>(api("/prune", { token: key, method: "POST", body: { tree_id: treeId, older_than_ms: 0 } }));
    expect(done.templates).toBe(templates.length);
    expect((await ok<{ data: TemplateSummary[] }>(api(`/trees/${treeId}/templates`, { token: key }))).data).toHaveLength(0);
  });

  it("Should drop a template that has no recorded evidence (learned before evidence was kept) with any prune of its tree", async () => {
    const { key, treeId, templates, users } = await twoFamilies();
    const legacy = templates[0].id;
    await env.DB.prepare("DELETE FROM template_evidence WHERE template_id = ?1").bind(legacy).run();
    const hello = users.find((u) => u.preview.includes("hello there"));
    expect(await ok<Outcome>(api(`/nodes/${hello?.hash}`, { token: key, method: "DELETE" }))).toMatchObject({ templates: 1 });
    const after = (await ok<{ data: TemplateSummary[] }>(api(`/trees/${treeId}/templates`, { token: key }))).data;
    expect(after.map((t) => t.id).sort()).toEqual(
      templates
        .slice(1)
        .map((t) => t.id)
        .sort(),
    );
  });

  it("Should count only the learned templates the panel lists, never a declared answer's evidence rows, and keep the evidence of answers that stay", async () => {
    const { key, treeId, templates, users } = await twoFamilies();
    const answerOf = async (user: NodeSummary | undefined) =>
      (await ok<{ data: NodeSummary[] }>(api(`/trees/${treeId}/children?parent=${user?.hash}`, { token: key }))).data[0];
    const hello = users.find((u) => u.preview.includes("hello there"));
    const refundUser = users.find((u) => u.preview.includes("A-1"));
    const [helloAnswer, refundAnswer] = [await answerOf(hello), await answerOf(refundUser)];
    // Declared answers keep their evidence as rows of `templates` (anchor -1), one per binding: three here.
    for (const [node, binding] of [
      [helloAnswer, "b1"],
      [helloAnswer, "b2"],
      [refundAnswer, "b3"],
    ] as const) {
      await recordDeclaredEvidence(env.DB, { treeId, key: node.parent, answer: node.hash, binding });
    }
    const declared = () =>
      env.DB.prepare("SELECT json_extract(pattern, '$.declared') AS answer FROM templates WHERE tree_id = ?1 AND anchor_depth = ?2")
        .bind(treeId, DECLARED_ANCHOR)
        .all<{ answer: string }>();
    expect((await declared()).results).toHaveLength(3);
    const panel = (await ok<{ data: TemplateSummary[] }>(api(`/trees/${treeId}/templates`, { token: key }))).data;
    expect(panel).toHaveLength(templates.length);
    // The stale preview of the whole tree counts what the panel lists.
    const dry = await ok<Outcome>(api("/prune", { token: key, method: "POST", body: { tree_id: treeId, older_than_ms: 0, dry_run: true } }));
    expect(dry.templates).toBe(panel.length);
    // Pruning the plain branch takes no template, and the evidence of its answer only.
    expect(await ok<Outcome>(api(`/nodes/${hello?.hash}/prune`, { token: key }))).toMatchObject({ nodes: 2, templates: 0 });
    expect(await ok<Outcome>(api(`/nodes/${hello?.hash}`, { token: key, method: "DELETE" }))).toMatchObject({ nodes: 2, templates: 0 });
    expect((await declared()).results.map((r) => r.answer)).toEqual([refundAnswer.hash]);
    expect((await ok<{ data: TemplateSummary[] }>(api(`/trees/${treeId}/templates`, { token: key }))).data).toHaveLength(panel.length);
  });

  it("Should answer 404 for another tenant's node and 400 for a malformed hash in the preview", async () => {
    const { users } = await twoFamilies();
    expect((await api(`/nodes/${users[0].hash}/prune`, { token: newKey() })).status).toBe(404);
    expect((await api(`/nodes/nothex/prune`, { token: newKey() })).status).toBe(400);
  });
});
