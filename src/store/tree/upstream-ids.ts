import { z } from "zod";
import type { UpstreamAnswer } from "../../cache/provider";
import type { Shard } from "../shards/shards";

const callIds = z.array(z.string());

/**
 * The answer `tenant` recorded under the upstream response id `upstreamId` (src/store/tree/record.ts), read
 * from the shards that may hold the tenant's trees; null when none did. Only the tenant's own rows are read:
 * the same id recorded by another tenant is not theirs to resolve. The caller still reads the answer through
 * its tenant-checked path, so a row whose answer was pruned resolves to nothing.
 */
export async function answerOfUpstreamId(from: readonly Shard[], tenant: string, upstreamId: string): Promise<UpstreamAnswer | null> {
  const rows = await Promise.all(
    from.map((shard) =>
      shard.db
        .prepare("SELECT tree_id AS treeId, answer_hash AS answerHash, call_ids AS callIds FROM upstream_responses WHERE tenant = ?1 AND upstream_id = ?2")
        .bind(tenant, upstreamId)
        .first<{ treeId: string; answerHash: string; callIds: string }>(),
    ),
  );
  const row = rows.find((r) => r !== null);
  if (!row) return null;
  const ids = callIds.safeParse(JSON.parse(row.callIds));
  return ids.success ? { treeId: row.treeId, answerHash: row.answerHash, callIds: ids.data } : null;
}
