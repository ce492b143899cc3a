import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { StoredAnswer } from "../cache/answer";
import type { CanonicalMessage } from "../cache/messages";
import { nodes, type NodeRow } from "./schema";

/** Converts a node row into the answer the proxy serves. */
export function answerOf(row: Pick<NodeRow, "hash" | "message" | "observations" | "finishReason" | "promptTokens" | "completionTokens" | "latencyMs">): StoredAnswer {
  return {
    hash: row.hash,
    message: JSON.parse(row.message) as CanonicalMessage,
    observations: row.observations,
    finishReason: row.finishReason ?? "stop",
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    latencyMs: row.latencyMs,
  };
}

/**
 * The recorded answers at h_n: the assistant children of one node. One indexed
 * query (nodes_parent_idx), whatever the depth of the conversation or the size
 * of the tree.
 */
export async function readAnswers(db: D1Database, parent: string): Promise<StoredAnswer[]> {
  const rows = await drizzle(db)
    .select({
      hash: nodes.hash,
      message: nodes.message,
      observations: nodes.observations,
      finishReason: nodes.finishReason,
      promptTokens: nodes.promptTokens,
      completionTokens: nodes.completionTokens,
      latencyMs: nodes.latencyMs,
    })
    .from(nodes)
    .where(and(eq(nodes.parent, parent), eq(nodes.role, "assistant")))
    .orderBy(nodes.hash);
  return rows.filter((row) => row.observations > 0).map(answerOf);
}
