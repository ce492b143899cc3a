import type { ProviderKey } from "../../cache/provider";
import { withTimeout } from "../../core/deadline";
import type { KnownPath, PathProbe } from "../../store/tree/divergence";
import { readDivergence } from "../../store/tree/divergence";
import { frameApi } from "../../core/protocol";
import { explainMiss, missHeaderValue, type MissExplanation, type MissKind } from "./explanation";
import { requestFieldNames } from "./request-paths";

/** What the lookup knew about a miss before the response: the `muscle-mem-miss` header's kind and depth. */
export interface MissBefore {
  kind: MissKind;
  depth: number | null;
  /** For `unconfirmed` from a lookup's read: how many answers it found recorded at the request's last message. */
  answers?: number;
}

/**
 * The kind of a miss from what the exact lookup already read (no query of its
 * own): answers recorded at h_n that none was served (`unconfirmed`, every
 * message matched), else the probe that rode in the lookup's statement
 * (`new-tree`, or `new-branch` at the recorded depth), else `unknown`.
 */
export function missBefore(pathLength: number, recorded: number, probe: PathProbe | null | undefined): MissBefore {
  if (recorded > 0) return { kind: "unconfirmed", depth: pathLength, answers: recorded };
  if (!probe) return { kind: "unknown", depth: null };
  if (!probe.tree) return { kind: "new-tree", depth: 0 };
  return probe.depth >= pathLength ? { kind: "unconfirmed", depth: pathLength, answers: 0 } : { kind: "new-branch", depth: probe.depth };
}

/** The header value of what was known before the response. */
export function missHeader(before: MissBefore): string {
  return missHeaderValue(before.kind, before.depth);
}

/** What explaining a miss after its response needs: the tree's shard, the request's key and its start. */
export interface ExplainInput {
  db: D1Database;
  key: ProviderKey;
  /** When the request started (ms): rows recorded since (the miss's own recording) are not compared. */
  startedAt: number;
  timeoutMs: number;
  /** The `muscle-mem-template-miss` reason, when a template could have served and did not. */
  template: string | null;
  /** What the request knew before its response (the header's kind and depth): its lookup's read, or a fast miss's isolate. */
  before?: MissBefore;
  /** A fast miss: forwarded with no lookup. */
  fast?: boolean;
  /** The parsed request the miss was keyed from: the explanation names fields as it wrote them (./request-paths.ts). */
  request?: unknown;
}

/**
 * What a fast miss knows before its response: the depth (1-based) of the path's node this isolate knows to
 * be childless, a new branch below it; every message when that node is the request's last (`unconfirmed`, as a lookup says it).
 */
export function fastMissBefore(pathLength: number, depth: number): MissBefore {
  return depth >= pathLength ? { kind: "unconfirmed", depth: pathLength } : { kind: "new-branch", depth };
}

/**
 * What a miss knew of its path before its response: a lookup's read (the header's kind and depth), or a fast
 * miss's isolate, which knows the path recorded down to its childless node (the header's depth) and read nothing.
 */
export function knownPath(before: MissBefore | undefined, fast: boolean): KnownPath | null {
  if (!before || before.depth === null) return null;
  if (before.kind === "new-tree") return { recorded: null, lookedUp: !fast };
  if (before.kind === "new-branch" || before.kind === "unconfirmed") return { recorded: before.depth, lookedUp: !fast };
  return null;
}

/**
 * The full explanation of a miss, after its response: one indexed D1 query
 * (src/store/tree/divergence.ts) on the tree's shard, bounded by
 * LOOKUP_TIMEOUT_MS, then the pure comparison (./explanation.ts). Only the
 * request's own tree and its tenant's trees of the same namespace and API are read. When that read fails
 * and a template said why it did not serve, the explanation is `unknown`
 * with that reason (depth 0: nothing compared), so the reason still reaches
 * `GET /api/requests/:id`; with no reason the failure is thrown (no explanation).
 */
export async function explainAfterResponse(input: ExplainInput): Promise<MissExplanation> {
  const { key } = input;
  let read: Awaited<ReturnType<typeof readDivergence>>;
  try {
    read = await withTimeout(
      readDivergence(input.db, {
        treeId: key.treeId,
        tenant: key.tenant,
        namespace: key.namespace,
        pathHashes: key.path.map((p) => p.hash),
        before: input.startedAt,
        known: knownPath(input.before, input.fast ?? false),
        api: frameApi(key.frameJson),
      }),
      input.timeoutMs,
      "divergence read",
    );
  } catch (error) {
    if (input.template === null) throw error;
    return { ...unexplained(key, input.template), fast_miss: input.fast ?? false };
  }
  const names = input.request === undefined ? undefined : requestFieldNames(key.frameJson, input.request, key.path.length);
  const facts = {
    treeId: key.treeId,
    frameJson: key.frameJson,
    path: key.path,
    template: input.template,
    fast: input.fast,
    answers: input.before?.answers,
    names,
  };
  return explainMiss({ ...facts, ...read });
}

/** A miss whose divergence could not be read, with the template's reason: kind `unknown`, nothing compared. */
export function unexplained(key: ProviderKey, template: string): MissExplanation {
  return {
    kind: "unknown",
    tree_id: key.treeId,
    depth: 0,
    messages: key.path.length,
    divergence: null,
    frame: null,
    template,
    fast_miss: false,
    answers: null,
  };
}

/** The explanation of a miss the client asked for (`cache-control: no-cache`): nothing to compare. */
export function askedMiss(key: ProviderKey): MissExplanation {
  return {
    kind: "no-cache",
    tree_id: key.treeId,
    depth: 0,
    messages: key.path.length,
    divergence: null,
    frame: null,
    template: null,
    fast_miss: false,
    answers: null,
  };
}
