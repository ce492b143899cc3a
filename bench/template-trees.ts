import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { refundDesk, type RefundCase } from "../tools/eval-workflows/refund";
import { say, seeded } from "../tools/eval-workflows/types";
import type { ChatBody, ScriptedMessage } from "../tools/scripted-model";
import type { WranglerDev } from "../test/support/wrangler-dev";
import { executeSqlFile } from "./grow";
import { post } from "./http";

/** The model name of the template rows: tools/eval-workflows picks the refund desk by the `wf-refund` prefix. */
export const TEMPLATE_MODEL = "wf-refund-bench";
/** A request whose last message carries this mark gets an answer no template can learn (see templateScript). */
export const FULL_MISS_MARK = "(bench full miss)";

/**
 * The scripted upstream for the template rows: the refund desk of the
 * template evaluation, except that a full-miss probe is answered with a fresh
 * reference the request does not contain. An answer leaf that copies no
 * request value cannot be a slot, so those answers never become templates and
 * every probe stays a miss. Null for other models.
 */
export function templateScript(body: ChatBody): ScriptedMessage | null {
  if (!body.model.startsWith(TEMPLATE_MODEL)) return null;
  const last = body.messages.at(-1);
  if (typeof last?.content === "string" && last.content.includes(FULL_MISS_MARK)) return say(`Noted. Reference R-${randomBytes(5).toString("hex")}.`);
  return refundDesk.script(body);
}

/** The headers of one bench tree: a tree is (tenant, namespace, frame), so equal bodies land in distinct trees. */
export const treeHeaders = (namespace: string, induction = true): Record<string, string> => ({
  authorization: "Bearer sk-bench",
  "muscle-mem-namespace": namespace,
  ...(induction ? {} : { "muscle-mem-induction": "off" }),
});

/**
 * Every request an agent sends for one case, in order: the scripted model's
 * answer (the ground truth) is appended, the tools are executed against the
 * case's world, until the model stops calling tools. Tool-call ids are keyed
 * as ordinals, so these bodies equal what a client of the Worker sends.
 */
export function caseBodies(c: RefundCase): ChatBody[] {
  const messages: ChatBody["messages"] = [
    { role: "system", content: refundDesk.system },
    { role: "user", content: refundDesk.userMessage(c) },
  ];
  const bodies: ChatBody[] = [];
  for (let step = 0; step < 8; step++) {
    const body: ChatBody = { model: TEMPLATE_MODEL, tools: refundDesk.tools, messages: [...messages] };
    bodies.push(body);
    const answer = refundDesk.script(body);
    messages.push({ role: "assistant", content: answer.content, tool_calls: answer.tool_calls });
    if (!answer.tool_calls?.length) break;
    for (const call of answer.tool_calls) {
      const output = refundDesk.execTool(c, { name: call.function.name, args: JSON.parse(call.function.arguments) as Record<string, unknown> });
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(output) });
    }
  }
  return bodies;
}

/** Seeded refund cases: `delivered` ones (the path learned templates serve) and one of every other ordinary kind. */
export function refundCases(seed: number, delivered: number, others: boolean): RefundCase[] {
  const rng = seeded(seed);
  const kinds = [...new Array<string>(delivered).fill("delivered"), ...(others ? refundDesk.kinds.map(([k]) => k).filter((k) => k !== "delivered") : [])];
  return kinds.map((kind) => refundDesk.makeCase(rng, kind));
}

/**
 * Records every body in the namespace's tree (`cache-control: no-cache`: the
 * model answers even when a template could, so that each body is an exact
 * hit afterwards) and returns the tree's id.
 */
export async function warmTree(dev: WranglerDev, namespace: string, bodies: ChatBody[], induction: boolean): Promise<string> {
  const headers = treeHeaders(namespace, induction);
  for (const body of bodies) {
    const res = await post(dev.url, body, { ...headers, "cache-control": "no-cache" });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`warming ${namespace}: HTTP ${res.status}`);
  }
  for (const body of bodies) {
    for (let tries = 0; ; tries++) {
      const res = await post(dev.url, body, { ...headers, "cache-control": "only-if-cached" });
      await res.arrayBuffer();
      if (res.status === 200 && !res.headers.get("muscle-mem-template")) break;
      if (tries > 100) throw new Error(`warming ${namespace}: a body was never recorded`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const rows = await dev.sql(`SELECT id FROM trees WHERE namespace = '${namespace}'`);
  if (rows.length !== 1) throw new Error(`warming ${namespace}: expected one tree, found ${rows.length}`);
  return String(rows[0].id);
}

/**
 * The bodies (of `candidates`) that miss exactly but are served by a learned
 * template in every one of `namespaces`: `only-if-cached`, so that a body no
 * template serves is neither sent to the model nor recorded. Waits up to
 * `waitMs` for the learners to confirm their templates.
 */
export async function learnedBodies(dev: WranglerDev, namespaces: string[], candidates: ChatBody[], waitMs = 30_000): Promise<ChatBody[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const served: ChatBody[] = [];
    for (const body of candidates) {
      let all = true;
      for (const namespace of namespaces) {
        const res = await post(dev.url, body, { ...treeHeaders(namespace), "cache-control": "only-if-cached" });
        await res.arrayBuffer();
        all &&= res.status === 200 && res.headers.get("muscle-mem-cache") === "hit" && Boolean(res.headers.get("muscle-mem-template"));
      }
      if (all) served.push(body);
    }
    if (served.length >= candidates.length / 2 || Date.now() > deadline) return served;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const hex32 = () => randomBytes(16).toString("hex");
const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
// D1 caps one statement at 100 KB.
const STATEMENT_BYTES = 90_000;

/**
 * Adds learned templates to `treeId` until it holds `target`, with direct SQL
 * inserts: each is a copy of one of the tree's real templates (same pattern
 * and state, so the same row size and confirmation) under a fresh id and a
 * fresh lookup key, as templates at other anchors and suffix skeletons of the
 * tree would be, with two observations each (template_observations, as the
 * learner leaves them). With `crowd`, the copies keep the lookup key of their
 * original and rank below it (fewer bindings in the ordering column): every
 * copy is then read and sorted by the lookup query of the requests that
 * template serves, the worst case for it. Returns the tree's template count.
 */
export async function padTemplates(dev: WranglerDev, config: string, treeId: string, target: number, crowd = false): Promise<number> {
  const real = await dev.sql(`SELECT lookup_key, anchor_depth, pattern, state, bindings FROM templates WHERE tree_id = '${treeId}' AND refuted = 0`);
  if (real.length === 0) throw new Error(`tree ${treeId} learned no template to copy`);
  const missing = target - (await templateCount(dev, treeId));
  if (missing <= 0) return templateCount(dev, treeId);
  const now = Date.now();
  const statements: string[] = [];
  const flush = (table: string, columns: string, values: string[]) => {
    let batch: string[] = [];
    let bytes = 0;
    for (const v of values) {
      if (bytes + v.length > STATEMENT_BYTES && batch.length) {
        statements.push(`INSERT INTO ${table} (${columns}) VALUES ${batch.join(",")};`);
        batch = [];
        bytes = 0;
      }
      batch.push(v);
      bytes += v.length + 1;
    }
    if (batch.length) statements.push(`INSERT INTO ${table} (${columns}) VALUES ${batch.join(",")};`);
  };
  const templateValues: string[] = [];
  const observationValues: string[] = [];
  for (let i = 0; i < missing; i++) {
    const t = real[i % real.length];
    const key = crowd ? String(t.lookup_key) : hex32();
    const bindings = crowd ? Math.max(0, Number(t.bindings) - 1) : Number(t.bindings);
    templateValues.push(
      `(${sqlString(hex32())},${sqlString(treeId)},${sqlString(key)},${Number(t.anchor_depth)},${sqlString(String(t.pattern))},${sqlString(String(t.state))},${bindings},0,0,${now},${now})`,
    );
    const shape = hex32();
    for (let j = 0; j < 2; j++) observationValues.push(`(${sqlString(hex32())},${sqlString(treeId)},${sqlString(shape)},${now})`);
  }
  flush("templates", "id,tree_id,lookup_key,anchor_depth,pattern,state,bindings,refuted,hits,created_at,updated_at", templateValues);
  flush("template_observations", "answer_hash,tree_id,shape_key,created_at", observationValues);
  const file = join(dev.stateDir, `templates-${treeId.slice(0, 8)}-${target}.sql`);
  writeFileSync(file, statements.join("\n"));
  await executeSqlFile(dev, config, file);
  return templateCount(dev, treeId);
}

/** The tree's templates that are not refuted. */
export async function templateCount(dev: WranglerDev, treeId: string): Promise<number> {
  const [{ n }] = await dev.sql(`SELECT COUNT(*) AS n FROM templates WHERE tree_id = '${treeId}' AND refuted = 0`);
  return Number(n);
}
