import type { ImportNode } from "../../providers/trajectory/line";

/** The nodes of one tree to seed, as the tree's Durable Object receives them. */
export interface ImportBatch {
  treeId: string;
  tenant: string;
  namespace: string;
  model: string;
  frameJson: string;
  /** Deduplicated by hash, ancestors first. */
  nodes: ImportNode[];
}

export interface ImportOutcome {
  nodesInserted: number;
}

/** Bound JSON per statement: D1 limits one value to 2 MB; stay well below. */
const CHUNK_CHARS = 700_000;

/**
 * Upserts many nodes with one bound JSON array per statement (json_each), so
 * the 100-parameter limit never bites. Path nodes are inserted if missing;
 * answers get observations >= 1 and token estimates if they had none, and an
 * answer whose node was written as history first (perhaps spelled otherwise:
 * content null for "") takes the answer's message. Running it twice changes nothing.
 */
const UPSERT_SQL = `INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations, prompt_tokens, completion_tokens, finish_reason, latency_ms, created_at)
  SELECT json_extract(value, '$.h'), json_extract(value, '$.p'), ?2, json_extract(value, '$.d'), json_extract(value, '$.r'),
         json_extract(value, '$.m'), json_extract(value, '$.o'), json_extract(value, '$.pt'), json_extract(value, '$.ct'),
         json_extract(value, '$.f'), 0, ?3
  FROM json_each(?1) WHERE true
  ON CONFLICT (hash) DO UPDATE SET
    message = CASE WHEN nodes.observations = 0 AND excluded.observations > 0 THEN excluded.message ELSE nodes.message END,
    observations = max(nodes.observations, excluded.observations),
    prompt_tokens = CASE WHEN nodes.prompt_tokens = 0 THEN excluded.prompt_tokens ELSE nodes.prompt_tokens END,
    completion_tokens = CASE WHEN nodes.completion_tokens = 0 THEN excluded.completion_tokens ELSE nodes.completion_tokens END,
    finish_reason = coalesce(nodes.finish_reason, excluded.finish_reason)`;

/** Splits nodes into JSON arrays of at most CHUNK_CHARS characters, keeping their order. */
export function chunkNodes(nodes: readonly ImportNode[], maxChars = CHUNK_CHARS): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 2;
  for (const node of nodes) {
    const json = JSON.stringify(node);
    if (current.length > 0 && size + json.length + 1 > maxChars) {
      chunks.push(`[${current.join(",")}]`);
      current = [];
      size = 2;
    }
    current.push(json);
    size += json.length + 1;
  }
  if (current.length > 0) chunks.push(`[${current.join(",")}]`);
  return chunks;
}

/**
 * Seeds one tree: the tree row if new, then the nodes chunk by chunk
 * (ancestors first, so a failure leaves no orphan), then the node count.
 * Run it through the tree's Durable Object.
 */
export async function importNodes(db: D1Database, batch: ImportBatch, now = Date.now()): Promise<ImportOutcome> {
  const before = await db.prepare(`SELECT count(*) AS n FROM nodes WHERE tree_id = ?1`).bind(batch.treeId).first<{ n: number }>();
  await db
    .prepare(`INSERT INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO NOTHING`)
    .bind(batch.treeId, batch.tenant, batch.namespace, batch.model, batch.frameJson, now)
    .run();
  for (const chunk of chunkNodes(batch.nodes)) await db.prepare(UPSERT_SQL).bind(chunk, batch.treeId, now).run();
  await db.prepare(`UPDATE trees SET node_count = (SELECT count(*) FROM nodes WHERE tree_id = ?1) WHERE id = ?1`).bind(batch.treeId).run();
  const after = await db.prepare(`SELECT node_count AS n FROM trees WHERE id = ?1`).bind(batch.treeId).first<{ n: number }>();
  return { nodesInserted: (after?.n ?? 0) - (before?.n ?? 0) };
}
