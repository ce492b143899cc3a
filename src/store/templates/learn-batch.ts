import type { LearnedTemplate } from "../../cache/templates/induce";
import type { LearnStep } from "../../cache/templates/learn-step";
import type { RecordInput } from "../tree/record";
import { learnFrom, MAX_PARTNERS, MAX_WEIGHED, prepare, stepOf, type LearnReport, type Prepared } from "./learn";
import { learningOf, learningStatements, type LearningRead, type PathTo } from "./learned";
import { evidenceStatement, evidenceTree, insertTemplateStatement, observeStatement, updateTemplateStatement } from "./save";

/** Recordings one pass reads for at most (4 statements each, one D1 call), and writes for (one more). */
export const MAX_PASS = 16;

/** Runs one pass's D1 work on the tree's database (the learner's queue: after every earlier learning and move). */
export type PassRunner = <T>(work: (db: D1Database) => Promise<T>) => Promise<T>;

/** What a pass writes, collapsed: a template updated twice is written once, in its last state and time. */
interface Writes {
  fresh: D1PreparedStatement[];
  updated: Map<string, D1PreparedStatement>;
  evidence: Map<string, D1PreparedStatement>;
  observations: D1PreparedStatement[];
}

/** The answers of `hashes` already observed (a partner's place is its first observation's time). */
const OBSERVED_SQL = (n: number) =>
  `SELECT answer_hash FROM template_observations WHERE answer_hash IN (${Array.from({ length: n }, (_, i) => `?${i + 1}`).join(", ")})`;

/** One recording's reads out of the pass's one batch of results. */
function readsOf(all: ReadonlyArray<D1Result<Record<string, unknown>>>, counts: readonly number[]): Array<ReadonlyArray<D1Result<Record<string, unknown>>>> {
  let at = 0;
  return counts.map((n) => all.slice(at, (at += n)));
}

/**
 * Learns `batch` (one tree's recordings, in the order recorded) in passes of at most MAX_PASS: each pass
 * one D1 call of reads (every recording's learningStatements, and which answers are observed already) and
 * one of writes, with exactly the templates, evidence and observations learning them one by one
 * (learnFrom, each stamped by `stamp`) would store. Learning one by one, each recording reads what the
 * ones before it wrote; a pass replays those reads in memory from what it read at its start:
 *
 * - templates: the states it updated (through their JSON, as a read gives them), less those it refuted;
 *   a recording whose templates read was cut at MAX_WEIGHED (more live templates than are weighed) or
 *   under whose lookup keys the pass induced a template (stored or not: its id may be stored refuted) ends
 *   the pass before it: it starts the next pass, which reads again;
 * - partners: the answers the pass observed first, newest first, then those read, at most MAX_PARTNERS,
 *   an answer observed before keeping its place (OBSERVED_SQL), each pass partner's path its own read.
 *
 * A recording whose learning throws is reported to `failed` and teaches nothing (as one by one); a pass
 * whose D1 work fails learns its recordings one by one (learnFrom). Returns each recording's report (null: failed).
 */
export async function learnBatch(
  batch: readonly RecordInput[],
  run: PassRunner,
  stamp: () => number,
  failed: (input: RecordInput, error: unknown) => void,
): Promise<Array<LearnReport | null>> {
  const reports: Array<LearnReport | null> = [];
  while (reports.length < batch.length) {
    const chunk = batch.slice(reports.length, reports.length + MAX_PASS);
    try {
      reports.push(...(await run((db) => learnPass(db, chunk, stamp, failed))));
    } catch (error) {
      failed(chunk[0], error);
      for (const input of chunk) reports.push(await run((db) => learnFrom(db, input, stamp())).catch((e: unknown) => (failed(input, e), null)));
    }
  }
  return reports;
}

/** One pass over the first recordings of `chunk` (at least one): their reports. */
async function learnPass(
  db: D1Database,
  chunk: readonly RecordInput[],
  stamp: () => number,
  failed: (input: RecordInput, error: unknown) => void,
): Promise<Array<LearnReport | null>> {
  const prepared = chunk.map((input): Prepared | null => {
    try {
      return prepare(input);
    } catch (error) {
      failed(input, error);
      return null;
    }
  });
  const live = prepared.filter((p) => p !== null);
  // None of them can be learned (each reported once): no D1 call, which an empty batch would fail.
  if (live.length === 0) return prepared.map(() => null);
  const statements = live.map((p) =>
    learningStatements(db, p.keys, MAX_WEIGHED + 1, { shapeKey: p.shapeKey, answerHash: p.input.answer.hash, limit: MAX_PARTNERS }),
  );
  const hashes = [...new Set(live.map((p) => p.input.answer.hash))];
  const observedRead = hashes.length > 0 ? [db.prepare(OBSERVED_SQL(hashes.length)).bind(...hashes)] : [];
  const results = await db.batch<Record<string, unknown>>([...statements.flat(), ...observedRead]);
  // SAFETY: OBSERVED_SQL's rows are answer hashes; each recording's results are its learningStatements'.
  const observed = new Set(observedRead.length > 0 ? ((results.at(-1)?.results ?? []) as Array<{ answer_hash: string }>).map((r) => r.answer_hash) : []);
  // Each recording's reads parsed once (its templates' JSON included): its own path is also a later recording's partner.
  const reads = readsOf(
    results,
    statements.map((s) => s.length),
  ).map((r, i) => learningOf(r, live[i].input.answer.hash));
  const ownPaths = new Map(live.map((p, i) => [p.input.answer.hash, reads[i].own]));
  const pass = new PassMemory(observed, ownPaths);
  const writes: Writes = { fresh: [], updated: new Map(), evidence: new Map(), observations: [] };
  const reports: Array<LearnReport | null> = [];
  let readAt = 0;
  for (const p of prepared) {
    if (!p) {
      reports.push(null);
      continue;
    }
    const read = reads[readAt++];
    const first = reports.length === 0;
    if (!first && (read.templates.length > MAX_WEIGHED || p.keys.some((k) => pass.freshKeys.has(k)))) break;
    let step: LearnStep;
    try {
      step = stepOf(p, pass.replayed(p, read));
    } catch (error) {
      failed(p.input, error);
      reports.push(null);
      continue;
    }
    pass.learned(db, p, step, stamp(), writes);
    reports.push({ outcomes: step.outcomes, induced: step.fresh.length });
  }
  const all = [...writes.fresh, ...writes.updated.values(), ...writes.evidence.values(), ...writes.observations];
  if (all.length > 0) await db.batch(all);
  return reports;
}

/** What a pass learned so far, to replay the reads of its later recordings (learnBatch). */
class PassMemory {
  /** Templates the pass updated, each as a read would give it (its stored JSON parsed). */
  private readonly current = new Map<string, LearnedTemplate>();
  /** Lookup keys of the templates the pass induced. */
  readonly freshKeys = new Set<string>();
  /** Answers the pass observed first, by shape class, newest first. */
  private readonly newer = new Map<string, string[]>();

  constructor(
    private readonly observed: Set<string>,
    private readonly ownPaths: ReadonlyMap<string, PathTo | null>,
  ) {}

  /** What `p` would read after the pass's earlier writes. */
  replayed(p: Prepared, read: LearningRead): LearningRead {
    const templates = read.templates
      .slice(0, MAX_WEIGHED)
      .map((t) => this.current.get(t.id) ?? t)
      .filter((t) => !t.state.refuted)
      .sort((a, b) => b.pattern.anchorDepth - a.pattern.anchorDepth || b.state.bindings.length - a.state.bindings.length);
    const hash = p.input.answer.hash;
    const newer = (this.newer.get(p.shapeKey) ?? []).filter((h) => h !== hash).map((h) => ({ hash: h, path: this.ownPaths.get(h) ?? null }));
    return { templates, partners: [...newer, ...read.partners].slice(0, MAX_PARTNERS), own: read.own };
  }

  /** Notes what `step` taught, stamped `now`, and its writes. */
  learned(db: D1Database, p: Prepared, step: LearnStep, now: number, writes: Writes): void {
    for (const t of step.fresh) {
      writes.fresh.push(insertTemplateStatement(db, t, now));
      this.freshKeys.add(t.lookupKey);
    }
    for (const t of step.updated) {
      const state = JSON.stringify(t.state);
      this.current.set(t.id, { ...t, state: JSON.parse(state) as LearnedTemplate["state"] });
      writes.updated.set(t.id, updateTemplateStatement(db, t, now, state));
    }
    const touched = [...step.fresh, ...step.updated];
    for (const e of step.evidence) {
      const key = `${e.templateId}\u0000${e.answerHash}`;
      if (!writes.evidence.has(key)) writes.evidence.set(key, evidenceStatement(db, e, evidenceTree(e, touched), now));
    }
    const hash = p.input.answer.hash;
    if (this.observed.has(hash)) return;
    this.observed.add(hash);
    this.newer.set(p.shapeKey, [hash, ...(this.newer.get(p.shapeKey) ?? [])]);
    writes.observations.push(observeStatement(db, { treeId: p.t.root, shapeKey: p.shapeKey, answerHash: hash }, now));
  }
}
