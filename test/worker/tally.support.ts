import { env } from "cloudflare:workers";

/** A fresh 32-hex id (a tree id or a node hash). */
export function freshId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

/** The insert of one answer node `?1` of tree `?2` at depth 1, with every other column at its default. */
export const NODE_INSERT = "INSERT INTO nodes (hash, parent, tree_id, depth, role, message) VALUES (?1, 'p', ?2, 1, 'assistant', '{}')";

/** A tree row and `n` answer nodes in D1, so that the hit tally's UPDATEs have rows to land on. */
export async function seedNodes(n: number): Promise<{ treeId: string; nodes: string[] }> {
  const treeId = freshId();
  const nodes = Array.from({ length: n }, freshId);
  const rows = [env.DB.prepare("INSERT INTO trees (id, tenant, namespace, frame, model, created_at) VALUES (?1, 't', 'default', '{}', 'm', 0)").bind(treeId)];
  for (const node of nodes) rows.push(env.DB.prepare(NODE_INSERT).bind(node, treeId));
  for (let i = 0; i < rows.length; i += 200) await env.DB.batch(rows.slice(i, i + 200));
  return { treeId, nodes };
}

/** A tree row and one answer node. */
export async function seedTree(): Promise<{ treeId: string; node: string }> {
  const { treeId, nodes } = await seedNodes(1);
  return { treeId, node: nodes[0] };
}
