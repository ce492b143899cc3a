/**
 * The explanation of a miss as it is stored with its request's row and served by `GET /api/requests/:id`
 * (docs/api.md, "Why it missed"): plain data, so that every layer may name it. The engine builds it
 * (src/engine/explain/).
 */

/** A short diff of two texts: the common context around the part that differs, and each side's differing part. */
export interface ShortDiff {
  /** The end of the text both share before the difference ("…" when cut). */
  before: string;
  /** The request's differing part (cut to a bound, "…" marks a cut). */
  incoming: string;
  /** The recorded node's differing part. */
  recorded: string;
  /** The start of the text both share after the difference. */
  after: string;
}

/** `new-tree`: no tree has this frame; `new-branch`: the path left the tree at `depth`; `unconfirmed`: every message matched but no recorded answer was served; `no-cache`: the client asked the model. */
export type MissKind = "new-tree" | "new-branch" | "unconfirmed" | "no-cache" | "unknown";

/** Where the request's path left its tree. */
export interface Divergence {
  /** The index of the first canonical message no recorded node has (the header's depth; system messages counted on Chat Completions). */
  index: number;
  role: string;
  /** The hash the request's message has (a node once the miss is recorded). */
  node: string;
  /** The deepest recorded node on the path: the fork (the tree id when the first message already differs). */
  parent: string;
  /** How many recorded children the fork has (other than the request's own message). */
  siblings: number;
  /** The recorded child nearest the request's message (same role first, then the fewest differing fields). */
  closest: { node: string; role: string; observations: number } | null;
  /**
   * The first field of the message that differs from the closest child, as the request wrote it on its API, with
   * the request's own item index (not `index`): `messages[3].tool_calls[0].function.arguments.amount_cents`,
   * `input[4].content`, `contents[2].parts[0].functionCall.args.order`; `[*]` where the place cannot be told exactly.
   */
  field: string | null;
  diff: ShortDiff | null;
}

/** For a new tree: which frame field differs from the tenant's nearest tree (same namespace, same API). */
export interface FrameDivergence {
  nearest_tree: string | null;
  nearest_model: string | null;
  /** `model`, `tools[2]`, `temperature`, `system`, … as far as the request holds it; null when the tenant has no other tree to compare. */
  field: string | null;
  diff: ShortDiff | null;
  /** How many of the tenant's trees of the request's API were compared (the most recently hit first, at most DIVERGENCE_TREES). */
  trees_compared: number;
}

/** The explanation kept with a miss's request record (`GET /api/requests/:id`). */
export interface MissExplanation {
  kind: MissKind;
  tree_id: string;
  /** How many of the request's messages matched recorded nodes. */
  depth: number;
  /** How many messages the request has. */
  messages: number;
  divergence: Divergence | null;
  frame: FrameDivergence | null;
  /** Why a template could have served and did not (`muscle-mem-template-miss`), when one could. */
  template: string | null;
  /**
   * True when the request was forwarded with no lookup (a fast miss: this isolate knew a node of its path to be
   * childless): the header's depth is what the isolate knew, `kind` and `depth` what the store held when the
   * request started (deeper when a child was recorded elsewhere since: a miss within HOT_CACHE_TTL_MS).
   */
  fast_miss: boolean;
  /**
   * For `unconfirmed`: how many answers are recorded at the request's last message. 0 when none is (the request
   * stops where recorded conversations go on, or ends with a recorded answer itself): nothing recorded answers it
   * yet. More when the serving policy, the template renderer or the credential's freshness (the row's `reason`)
   * served none. Null for the other kinds.
   */
  answers: number | null;
}
