import type { StoredAnswer } from "../../core/answer";
import { choose, type ServePolicy } from "../../cache/policy";
import { answersStatement, servedAnswers, type AnswerRow } from "../tree/answers";
import { probedAnswersStatement, probedFrom, type PathProbe } from "../tree/divergence";
import { withTimeout } from "../../core/deadline";
import type { Joined, SingleFlight } from "./single-flight";
import { liveTemplatesStatement } from "../templates/learned";
import { meterD1, type D1Cost } from "../../observability/store-meter";

/** What a cold exact lookup asks the tree's object (TreeWriter.lookupOrJoin): plain data. */
export interface LookupOrJoinRequest {
  treeId: string;
  /** h_n, the path hash whose answers are read and whose flight is joined. */
  key: string;
  policy: ServePolicy;
  /** LOOKUP_TIMEOUT_MS as the Worker sees it: the D1 read's bound, and past it the object joins no flight. */
  timeoutMs: number;
  /** Whether the route can serve learned templates (then a tree with live ones is not joined: see `templates`). */
  templates: boolean;
  /** Whether a miss joins single flight (false for `only-if-cached`, which never generates). */
  join: boolean;
  /** The request's path hashes: a miss then says how deep the path is recorded (`probe`, in the same query). */
  path?: string[];
  /** The Worker's own read had nothing to serve and went to the primary of shard `seen.shard` (no read replication). */
  seen?: PrimaryRead;
}

/** A Worker's cold read on a shard's primary: which shard, and how long before the object call left the Worker it began. */
export interface PrimaryRead {
  shard: string;
  agoMs: number;
}

/**
 * What the object knows to trust a PrimaryRead instead of reading again: the
 * tree's home shard (a directory read at most once per activation) and whether
 * it wrote anything that could change the answers at a key within a time
 * (src/store/objects/recent-writes.ts).
 */
export interface ReadCheck {
  home(): Promise<string>;
  quiet(key: string, withinMs: number): boolean;
}

/**
 * The answer of the object call of a cold lookup the Worker's own read could not serve: a `hit` (a replica behind, or a record landed since; the answers at h_n and
 * the one the policy serves, which the Worker keeps in its isolate and colo
 * layers), or a `miss` with the request's single-flight claim taken in the
 * same call (lead, a recent answer, or wait). `templates` says whether the
 * tree has live learned templates (false when the route serves none). `joined`
 * is null when the request may not join, or when the tree has live templates:
 * the Worker looks those up first and claims after (a second call, only there).
 * `reread` is false when the object trusted the Worker's read of the primary
 * (`request.seen`): `answers` is then empty and `probe` absent, the Worker
 * keeps its own. `d1` is what the object did to D1 for this call (the directory, when it had
 * not resolved the tree's shard yet, and the answers), which the Worker adds
 * to the request's `server-timing` d1 entry.
 */
export type LookedUp = (
  | { status: "hit"; answers: StoredAnswer[]; chosen: number }
  | { status: "miss"; answers: StoredAnswer[]; templates: boolean; joined: Joined | null; probe?: PathProbe | null; reread: boolean }
) & { d1: D1Cost };

/**
 * Runs a cold lookup inside the tree's object: the tree's shard (`db`), one D1
 * read of the answers at h_n (and, when the route serves templates, whether
 * the tree has live ones, read alongside), the serving policy, then, on a
 * miss, the single-flight join. Every D1 query of the call is counted in `d1`
 * (`db` must come from metered bindings: src/observability/store-meter.ts).
 * Throws when the read fails or outlasts `timeoutMs` (the Worker fails open);
 * a read that finished past the bound joins nothing, since the Worker has
 * stopped waiting and could never settle the claim.
 *
 * With `request.seen` and a `check` (the Worker already read the tree's
 * primary and found nothing to serve), the answers are not read again when
 * the shard the Worker read is the tree's home and, right before the join,
 * nothing this object wrote could have changed the answers at h_n since that
 * read began: within `seen.agoMs`, plus `timeoutMs` for the call's way here
 * (a call slower than that the Worker no longer waits for), plus the time
 * spent here. Otherwise (a recording of the key since, one running, an
 * import, prune or move, another shard) it reads as above. A miss is the only
 * outcome the shortcut can add (a duplicate generation, never a replay).
 */
export async function lookUpOrJoin(
  db: () => Promise<D1Database>,
  flights: SingleFlight,
  request: LookupOrJoinRequest,
  now: () => number = Date.now,
  check?: ReadCheck,
): Promise<LookedUp> {
  const arrived = now();
  let started = arrived;
  const seen = request.seen;
  const { value: trusted, d1 } = await meterD1(async () => {
    const shard = await db();
    started = now();
    if (!seen || !check || (await check.home()) !== seen.shard) return null;
    // Only template presence is still to read (on a template route): one query, none elsewhere.
    const templates = request.templates
      ? await withTimeout(hasLiveTemplates(shard, request.treeId), request.timeoutMs, "D1 lookup in the tree's object")
      : false;
    return { templates };
  });
  if (trusted && seen && check?.quiet(request.key, seen.agoMs + request.timeoutMs + (now() - arrived))) {
    if (trusted.templates || !request.join) return { status: "miss", answers: [], templates: trusted.templates, joined: null, reread: false, d1 };
    if (now() - started >= request.timeoutMs) throw new Error("D1 lookup in the tree's object finished too late to join");
    return { status: "miss", answers: [], templates: false, joined: flights.join(request.key), reread: false, d1 };
  }
  return readAndJoin(db, flights, request, now, d1);
}

/** The lookup with its own read of the answers (and template presence) on the tree's shard, then the join on a miss. */
async function readAndJoin(
  db: () => Promise<D1Database>,
  flights: SingleFlight,
  request: LookupOrJoinRequest,
  now: () => number,
  before: D1Cost,
): Promise<LookedUp> {
  let started = now();
  const {
    value: [answers, templates, probe],
    d1: read,
  } = await meterD1(async () => {
    const shard = await db();
    started = now();
    return withTimeout(
      readAnswersAndPresence(
        shard,
        request.key,
        request.templates ? request.treeId : null,
        request.path ? { treeId: request.treeId, path: request.path } : null,
      ),
      request.timeoutMs,
      "D1 lookup in the tree's object",
    );
  });
  const d1 = addCosts(before, read);
  const chosen = choose(answers, request.policy);
  if (chosen !== null) return { status: "hit", answers, chosen, d1 };
  if (templates || !request.join) return { status: "miss", answers, templates, joined: null, probe, reread: true, d1 };
  if (now() - started >= request.timeoutMs) throw new Error("D1 lookup in the tree's object finished too late to join");
  return { status: "miss", answers, templates, joined: flights.join(request.key), probe, reread: true, d1 };
}

/** Whether the tree has live learned templates: one query. */
async function hasLiveTemplates(db: D1Database, treeId: string): Promise<boolean> {
  const live = await liveTemplatesStatement(db, treeId).all<unknown>();
  return live.results.length > 0;
}

/**
 * The answers at `key` and, when `treeId` is given, whether that tree has live
 * templates: one D1 call either way (a batch of the two reads, one round trip
 * instead of two). With `probed`, the answers query is the probed one
 * (src/store/tree/divergence.ts): the same one statement, which on a miss also
 * says how deep the request's path is recorded.
 */
async function readAnswersAndPresence(
  db: D1Database,
  key: string,
  treeId: string | null,
  probed: { treeId: string; path: string[] } | null,
): Promise<[StoredAnswer[], boolean, PathProbe | null]> {
  const answersQuery = probed ? probedAnswersStatement(db, key, probed.treeId, probed.path) : answersStatement(db, key);
  const [answers, live] = treeId === null ? [await answersQuery.all<unknown>()] : await db.batch<unknown>([answersQuery, liveTemplatesStatement(db, treeId)]);
  // SAFETY: the first statement is ANSWERS_SQL or PROBED_ANSWERS_SQL, whose rows are AnswerRows (and the probe's); batch types every result alike.
  const read = probed ? probedFrom(answers as Parameters<typeof probedFrom>[0]) : { rows: (answers as D1Result<AnswerRow>).results, probe: null };
  return [servedAnswers(read.rows), live !== undefined && live.results.length > 0, read.probe];
}

/** Two counts of D1 work, added (the directory and template reads before a re-read, and the re-read). */
function addCosts(a: D1Cost, b: D1Cost): D1Cost {
  return { queries: a.queries + b.queries, ms: a.ms + b.ms, rowsRead: a.rowsRead + b.rowsRead, rowsWritten: a.rowsWritten + b.rowsWritten };
}
