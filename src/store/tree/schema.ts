import { sql, type InferSelectModel } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per tree: (tenant, namespace, frame). The id is the root hash h0.
 * Counters are bumped by the tree's Durable Object (misses, nodes) and by the
 * Worker's buffered hit counter (hits, bypasses, tokens saved).
 */
export const trees = sqliteTable(
  "trees",
  {
    id: text("id").primaryKey(),
    tenant: text("tenant").notNull(),
    namespace: text("namespace").notNull(),
    model: text("model").notNull(),
    frame: text("frame").notNull(),
    createdAt: integer("created_at").notNull(),
    lastHitAt: integer("last_hit_at"),
    nodeCount: integer("node_count").notNull().default(0),
    hits: integer("hits").notNull().default(0),
    misses: integer("misses").notNull().default(0),
    bypasses: integer("bypasses").notNull().default(0),
    promptTokensSaved: integer("prompt_tokens_saved").notNull().default(0),
    completionTokensSaved: integer("completion_tokens_saved").notNull().default(0),
    latencySavedMs: integer("latency_saved_ms").notNull().default(0),
  },
  (t) => [index("trees_tenant_idx").on(t.tenant, t.lastHitAt)],
);

/**
 * One row per message. `hash` is the path hash h_i = H(h_{i-1}, canonical(m_i));
 * `parent` is h_{i-1} (the tree id for the first message). An assistant child of
 * a request's h_n is a recorded answer; `observations` counts how often the model
 * produced it there.
 */
export const nodes = sqliteTable(
  "nodes",
  {
    hash: text("hash").primaryKey(),
    parent: text("parent").notNull(),
    treeId: text("tree_id").notNull(),
    depth: integer("depth").notNull(),
    role: text("role").notNull(),
    message: text("message").notNull(),
    observations: integer("observations").notNull().default(0),
    hits: integer("hits").notNull().default(0),
    promptTokens: integer("prompt_tokens").notNull().default(0),
    completionTokens: integer("completion_tokens").notNull().default(0),
    finishReason: text("finish_reason"),
    latencyMs: integer("latency_ms").notNull().default(0),
    createdAt: integer("created_at").notNull().default(sql`(unixepoch() * 1000)`),
    lastHitAt: integer("last_hit_at"),
  },
  (t) => [index("nodes_parent_idx").on(t.parent), index("nodes_tree_idx").on(t.treeId, t.depth)],
);

export type TreeRow = typeof trees.$inferSelect;
export type NodeRow = typeof nodes.$inferSelect;

/**
 * The rows as D1's own statements read them (`db.prepare(…).all()`): each column by its database name. The
 * row types of the store's queries are picked from these, never written out again by hand.
 */
export type TreeRecord = InferSelectModel<typeof trees, { dbColumnNames: true }>;
export type NodeRecord = InferSelectModel<typeof nodes, { dbColumnNames: true }>;

/** The preview columns a node list selects beside its own (node-preview.ts previewColumns). */
export interface PreviewColumns {
  content: string | null;
  tool_calls: string | null;
  tool_call_id: string | null;
}

/**
 * Learned templates (docs/templates.md). A template generalises sibling
 * trajectories of one tree; it is found by `lookup_key` = H(anchor h_k,
 * skeletons of the messages after it). `pattern` and `state` are JSON
 * (src/cache/templates/learned.ts); `refuted` templates never serve again.
 */
export const templates = sqliteTable(
  "templates",
  {
    id: text("id").primaryKey(),
    treeId: text("tree_id").notNull(),
    lookupKey: text("lookup_key").notNull(),
    anchorDepth: integer("anchor_depth").notNull(),
    pattern: text("pattern").notNull(),
    state: text("state").notNull(),
    bindings: integer("bindings").notNull().default(0),
    refuted: integer("refuted").notNull().default(0),
    hits: integer("hits").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("templates_lookup_idx").on(t.lookupKey), index("templates_tree_idx").on(t.treeId)],
);

/**
 * One row per answer the model gave that templates may learn from, grouped by
 * `shape_key` (same tree, same skeletons): the partners a new answer is paired with.
 */
export const templateObservations = sqliteTable(
  "template_observations",
  {
    answerHash: text("answer_hash").primaryKey(),
    treeId: text("tree_id").notNull(),
    shapeKey: text("shape_key").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("template_observations_shape_idx").on(t.shapeKey, t.createdAt)],
);

/**
 * Which recorded answers a template was learned from or confirmed by (its
 * confirming evidence): a prune drops exactly the templates whose evidence it
 * removes. A template with no rows here (learned before this table) counts as
 * evidenced by every answer of its tree.
 */
export const templateEvidence = sqliteTable(
  "template_evidence",
  {
    templateId: text("template_id").notNull(),
    answerHash: text("answer_hash").notNull(),
    treeId: text("tree_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.templateId, t.answerHash] }), index("template_evidence_answer_idx").on(t.answerHash)],
);

/**
 * The last requests the cached routes answered (at most RECENT_KEPT_PER_TREE rows per tree and RECENT_KEPT per
 * database), written with the hit counters' flush in one statement: time,
 * tree, outcome, status, latency, tokens and the node that served a hit.
 * Hits and bypasses of one tree are gathered into one row per write, with
 * `count` the requests it stands for (src/store/tree/recent-gather.ts): so hits
 * add rows per tree and write interval, never per hit. Never keys; a miss's
 * explanation holds short excerpts (at most a few hundred characters) of the tenant's own messages. Rows without a tree (requests never keyed) are
 * listed to the admin only.
 */
export const recentRequests = sqliteTable(
  "recent_requests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    treeId: text("tree_id"),
    route: text("route").notNull(),
    outcome: text("outcome").notNull(),
    status: integer("status").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    nodeHash: text("node_hash"),
    templateId: text("template_id"),
    reason: text("reason"),
    count: integer("count").notNull().default(1),
    /** The `x-request-id` the client saw (a gathered row: its latest request's). */
    requestId: text("request_id"),
    /** A miss's explanation, JSON (src/core/explanation.ts MissExplanation): the tenant's own recordings only. */
    explanation: text("explanation"),
    /** An error answer's message (the upstream's `error.message`, or the Worker's own), at most 300 characters. */
    error: text("error"),
    /** The tenant of a keyed request: its rows are its own even when its tree was never recorded (an upstream error). */
    tenant: text("tenant"),
  },
  (t) => [index("recent_requests_tree_idx").on(t.treeId, t.id), index("recent_requests_request_idx").on(t.requestId)],
);

export type TemplateRow = typeof templates.$inferSelect;
/** A templates row as D1's own statements read it (database column names). */
export type TemplateRecord = InferSelectModel<typeof templates, { dbColumnNames: true }>;
/** A recent_requests row as D1's own statements read it (database column names). */
export type RecentRequestRecord = InferSelectModel<typeof recentRequests, { dbColumnNames: true }>;

/** The columns of a LEFT JOIN's right side: each may be null (no matching row). */
export type LeftJoined<T> = { [K in keyof T]: T[K] | null };

/**
 * The tree directory (src/store/shards/directory.ts), kept in the first shard (`DB`)
 * only: which shard holds each tree. A tree with no row is where the hash rule
 * over D1_SHARDS puts it (trees recorded before the directory); its writer
 * records the row on its first write. `moving_to` is set while a move copies
 * the tree; `draining_from` while the old shard's rows are deleted after the switch.
 */
export const treeDirectory = sqliteTable(
  "tree_directory",
  {
    treeId: text("tree_id").primaryKey(),
    tenant: text("tenant").notNull(),
    namespace: text("namespace").notNull(),
    shard: text("shard").notNull(),
    movingTo: text("moving_to"),
    drainingFrom: text("draining_from"),
    createdAt: integer("created_at").notNull(),
    movedAt: integer("moved_at"),
  },
  (t) => [index("tree_directory_shard_idx").on(t.shard), index("tree_directory_tenant_idx").on(t.tenant, t.shard)],
);

/**
 * Trees per shard by the directory (in DB only): what new-tree placement reads instead of counting the
 * whole directory (src/store/shards/placement.ts). Kept by triggers on `tree_directory` (migration 0011):
 * a row inserted counts +1 on its shard, a row deleted -1, a switch of `shard` (a move) -1 and +1, in
 * the statement's own transaction, so the counts never drift from the rows. A shard with no row has none.
 */
export const shardTrees = sqliteTable("shard_trees", {
  shard: text("shard").primaryKey(),
  trees: integer("trees").notNull().default(0),
});

/** Rows as D1's own statements read them (db.prepare(…).first()): each column by its database name. */
export type DirectoryRecord = InferSelectModel<typeof treeDirectory, { dbColumnNames: true }>;
export type DirectoryBackfillRecord = InferSelectModel<typeof directoryBackfill, { dbColumnNames: true }>;
export type ShardTreesRecord = InferSelectModel<typeof shardTrees, { dbColumnNames: true }>;

/**
 * The directory backfill per shard (in DB only): how far it has listed the
 * shard's trees (`after`, a tree id) and when every tree of the shard had a
 * directory row (`done_at`). Once every shard is done, lists and stats read
 * only the shards the directory names (src/store/shards/directory-backfill.ts).
 */
export const directoryBackfill = sqliteTable("directory_backfill", {
  shard: text("shard").primaryKey(),
  after: text("after").notNull().default(""),
  doneAt: integer("done_at"),
});

/**
 * The cron's sweep that arms each tree's stale-prune alarm (in DB only): how
 * far it has listed each shard's trees in this pass (`after`, a tree id; ''
 * starts the next pass), how many passes it finished and when the last one
 * ended (src/store/prune/sweep.ts).
 */
export const pruneSweep = sqliteTable("prune_sweep", {
  shard: text("shard").primaryKey(),
  after: text("after").notNull().default(""),
  passes: integer("passes").notNull().default(0),
  passedAt: integer("passed_at"),
});

/**
 * When the provider last accepted each credential (in DB only), by tenant (the credential's hash; the key
 * is never stored): a request's successful upstream call or the Worker's cheap check (src/engine/key-freshness.ts).
 * A credential is served hits, and reads its tenant's trees through /api, only while this is within KEY_FRESH_MS.
 */
export const credentialChecks = sqliteTable("credential_checks", {
  tenant: text("tenant").primaryKey(),
  acceptedAt: integer("accepted_at").notNull(),
  /** Whose credential it is (`openai`, `anthropic`, `gemini`): the provider that last accepted it, which a stale key's re-check asks. */
  provider: text("provider"),
});

/**
 * Which recorded answer an upstream-issued response id (the Responses API's `resp_…` of a miss) belongs to,
 * per tenant: a later request whose `previous_response_id` is that id is resolved into the conversation
 * (src/providers/responses/resolve.ts). Written in the recording's batch, in the tree's shard; a row whose
 * answer is pruned no longer resolves (the answer is read through its tenant-checked path).
 */
export const upstreamResponses = sqliteTable(
  "upstream_responses",
  {
    tenant: text("tenant").notNull(),
    upstreamId: text("upstream_id").notNull(),
    treeId: text("tree_id").notNull(),
    answerHash: text("answer_hash").notNull(),
    /** The upstream's `call_id` of each of the answer's calls, in order (JSON array): what the client echoes. */
    callIds: text("call_ids").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.upstreamId] }), index("upstream_responses_tree_idx").on(t.treeId)],
);

/**
 * A learned template's answer served on Responses to a request that may chain on it (`store` unset or true):
 * the served id (`resp_mm<tree><answer_hash>…`) names no node, so a later `previous_response_id` is resolved
 * from this row (src/providers/responses/resolve.ts, src/store/tree/served-answers.ts). Written before the
 * answer is served, in the tree's shard; the conversation is the path to `base` (a recorded node, another
 * row's answer, or the tree id for the root) then `tail` then `answer`. Deleted with the tree, and by its stale
 * prune once older than PRUNE_TTL_MS.
 */
export const servedAnswers = sqliteTable(
  "served_answers",
  {
    tenant: text("tenant").notNull(),
    treeId: text("tree_id").notNull(),
    answerHash: text("answer_hash").notNull(),
    /** h_n of the request it answered (the answer's parent). */
    parent: text("parent").notNull(),
    /** Where `tail` starts: the path to this hash (a node or another row's answer) comes before it; the tree id: the root. */
    base: text("base").notNull(),
    /** The request's stored messages after `base`, up to `parent` (JSON array of [hash, message JSON]). */
    tail: text("tail").notNull(),
    /** The answer message as served (its stored JSON). */
    answer: text("answer").notNull(),
    /** How many rows `base` leads through before a node or the root (resolution reads at most MAX_SERVED_LINKS). */
    links: integer("links").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.treeId, t.answerHash] }), index("served_answers_tree_idx").on(t.treeId, t.createdAt)],
);
