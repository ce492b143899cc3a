import { z } from "zod";
import { listed } from "../../core/var-rules";
import { ApiError } from "../../core/errors";
import { forgetAnswers } from "../../engine/isolate";
import { overBytes } from "../../core/limits";
import type { KeyScope } from "../../cache/provider";
import { HEX32 } from "../../core/protocol";
import type { ImportBatch } from "../../store/objects/seed";
import { treeWriterOf } from "../../store/objects/tree-objects";
import { keyLine, trajectoryLine, type ImportNode } from "../../providers/trajectory/line";
import { lineApi } from "../../providers/trajectory/formats";
import { providerOfApi } from "../../providers";
import { readControls } from "../../engine/controls";
import { bodyText, parseExactJson } from "../../core/body";
import { parseWith, type ApiCtx } from "./params";

/** Message characters per Durable Object call (RPC payloads stay well under their limit). */
const RPC_CHARS = 8_000_000;

interface TreeImport {
  frameJson: string;
  model: string;
  nodes: Map<string, ImportNode>;
}

const importQuery = z.object({ tenant: z.string().regex(HEX32, "must be a tenant id (32 lowercase hex characters)").optional() });

/**
 * The tenant an import seeds: the admin names one with `?tenant=`; a key imports into its own tenant, and
 * only with a grant (its tenant id in IMPORT_TENANTS, or `*` there): what it imports is served to every
 * agent on that key, so seeding is the operator's decision, not any key holder's.
 */
function importTenant(c: ApiCtx): string {
  const q = parseWith(importQuery, c.req.query());
  const caller = c.var.caller;
  if (!caller.admin) {
    if (q.tenant !== undefined) throw new ApiError("invalid_request", "Only the admin token may name a tenant; a key imports into its own.", "tenant");
    if (!listed(c.var.services.config.access.importTenants, caller.tenant)) {
      throw new ApiError("forbidden", `Importing needs the admin token, or a grant for this key's tenant (${caller.tenant}) in IMPORT_TENANTS.`);
    }
    return caller.tenant;
  }
  if (q.tenant === undefined) throw new ApiError("invalid_request", "The admin token must name the tenant to seed: ?tenant=<tenant id>.", "tenant");
  return q.tenant;
}

/** The body's lines as they arrive, numbered from 1 (never the whole body as one string). */
async function* linesOf(chunks: AsyncIterable<string>): AsyncGenerator<{ raw: string; index: number }> {
  let rest = "";
  let index = 0;
  for await (const chunk of chunks) {
    rest += chunk;
    let end = rest.indexOf("\n");
    while (end >= 0) {
      yield { raw: rest.slice(0, end), index: index++ };
      rest = rest.slice(end + 1);
      end = rest.indexOf("\n");
    }
  }
  yield { raw: rest, index };
}

/**
 * Parses and keys every line as the body arrives (each line's text is dropped once keyed): one bad line
 * rejects the whole import, before anything is written.
 */
async function keyLines(chunks: AsyncIterable<string>, scope: KeyScope): Promise<{ lines: number; trees: Map<string, TreeImport> }> {
  const { tenant, namespace } = scope;
  const trees = new Map<string, TreeImport>();
  let lines = 0;
  for await (const { raw, index } of linesOf(chunks)) {
    if (raw.trim() === "") continue;
    const where = `line ${index + 1}`;
    const { json, lossy } = parseExactJson(raw, where);
    if (lossy) throw new ApiError("invalid_request", `${where}: the trajectory cannot be keyed exactly (${lossy}).`, where);
    // A line naming its API (params["muscle-mem:api"]) is keyed by that API's format; others are chat lines.
    const api = lineApi(json);
    const format = api === null ? undefined : providerOfApi(api)?.format;
    if (api !== null && !format) throw new ApiError("invalid_request", `${where}: no API named ${JSON.stringify(api)} (params["muscle-mem:api"]).`, where);
    const keyed = format ? format.keyLine(json, scope) : keyLine(parseWith(trajectoryLine, json, where), tenant, namespace);
    if ("error" in keyed) throw new ApiError("invalid_request", `${where}: ${keyed.error}`, where);
    // The key bounds each message by its hash form; a stored answer also holds what it keeps outside its hash (its envelope), and D1 rejects a row over 1 MB.
    const tooLarge = keyed.nodes.findIndex((node) => overBytes(node.m, scope.maxMessageBytes));
    if (tooLarge >= 0)
      throw new ApiError(
        "invalid_request",
        `${where}: message ${keyed.nodes[tooLarge].d - 1} is too large to store (over MAX_CACHEABLE_MESSAGE_BYTES, ${scope.maxMessageBytes} bytes, with what it keeps outside its hash).`,
        where,
      );
    lines++;
    const tree = trees.get(keyed.treeId) ?? { frameJson: keyed.frameJson, model: keyed.model, nodes: new Map() };
    trees.set(keyed.treeId, tree);
    for (const node of keyed.nodes) {
      const known = tree.nodes.get(node.h);
      if (!known || node.o > known.o) tree.nodes.set(node.h, node);
    }
  }
  if (lines === 0) throw new ApiError("invalid_request", "The body holds no JSONL lines.", "body");
  return { lines, trees };
}

/** Splits a tree's nodes (ancestors first) into Durable Object calls of bounded size. */
function rpcBatches(nodes: ImportNode[]): ImportNode[][] {
  const sorted = [...nodes].sort((a, b) => a.d - b.d);
  const batches: ImportNode[][] = [];
  let current: ImportNode[] = [];
  let chars = 0;
  for (const node of sorted) {
    if (current.length > 0 && chars + node.m.length > RPC_CHARS) {
      batches.push(current);
      current = [];
      chars = 0;
    }
    current.push(node);
    chars += node.m.length;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * `POST /api/import`: seeds trees from JSONL trajectories without calling a
 * model, through each tree's Durable Object. Idempotent.
 */
export async function postImport(c: ApiCtx): Promise<Response> {
  const tenant = importTenant(c);
  const { namespace } = readControls(c.req.raw.headers);
  const { config } = c.var.services;
  const { lines, trees } = await keyLines(bodyText(c.req.raw, config.maxBodyBytes), {
    tenant,
    namespace,
    maxMessageBytes: config.maxCacheableMessageBytes,
  });
  let inserted = 0;
  let answers = 0;
  const changedKeys = new Set<string>();
  for (const [treeId, tree] of trees) {
    const writer = treeWriterOf(c.env, treeId);
    const nodes = [...tree.nodes.values()];
    for (const n of nodes) if (n.o > 0) changedKeys.add(n.p);
    answers += nodes.filter((n) => n.o > 0).length;
    for (const batch of rpcBatches(nodes)) {
      const input: ImportBatch = { treeId, tenant, namespace, model: tree.model, frameJson: tree.frameJson, nodes: batch };
      const outcome = await writer.importPaths(input);
      inserted += outcome.nodesInserted;
    }
  }
  await forgetAnswers(config, changedKeys);
  return c.json({ lines, trees: trees.size, nodes_inserted: inserted, answers, tenant, namespace });
}
