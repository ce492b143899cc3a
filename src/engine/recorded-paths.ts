import type { RecordedPaths } from "../cache/provider";
import { shardFor } from "../store/shards/directory";
import { shardsToRead } from "../store/shards/directory-backfill";
import { nodeOwner, readPathRows } from "../store/tree/node-read";
import { answerOfUpstreamId } from "../store/tree/upstream-ids";
import { servedAnswerOf } from "../store/tree/served-answers";
import { writesSettled } from "./pending-writes";

/**
 * The store as a provider's `resolve` reads it: a recorded path only when its answer sits in the caller's
 * own tree (`tenant`), and a template's answer it was served and kept; another tenant's answer, a pruned or
 * unknown node read as null.
 */
export function recordedPaths(env: Env, tenant: string, directoryTimeoutMs: number): RecordedPaths {
  return {
    async pathTo(treeId, answerHash) {
      const db = (await shardFor(env, treeId, { timeoutMs: directoryTimeoutMs })).db;
      const owner = await nodeOwner(db, answerHash);
      if (!owner || owner.tenant !== tenant || owner.treeId !== treeId) return null;
      return readPathRows(db, answerHash);
    },
    async answerOfUpstreamId(upstreamId) {
      // A recording this isolate is still writing may be the one: the client chains as soon as it has the answer.
      await writesSettled(tenant);
      return answerOfUpstreamId(await shardsToRead(env, { tenant }), tenant, upstreamId);
    },
    async servedAnswer(treeId, answerHash) {
      // Kept before the answer was served (src/engine/template-hook.ts), in the tree's shard.
      return servedAnswerOf((await shardFor(env, treeId, { timeoutMs: directoryTimeoutMs })).db, tenant, treeId, answerHash);
    },
  };
}
