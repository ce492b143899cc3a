import type { StoredAnswer } from "../core/answer";
import type { RequestKey } from "../providers/chat/key";
import { parseBindings, type Bindings } from "../cache/templates/bindings";
import {
  bindingDigestOf,
  declaredRefusal,
  hashForm,
  renderDeclared,
  unstoredAnswerOf,
  withDeclared,
  type DeclaredConfirmation,
} from "../cache/templates/declared";
import { learnedLookup, learnedOutcome } from "../cache/templates/learned-answer";
import { headerSafe } from "../cache/templates/miss-reason";
import { inductionOffFor, type TemplateSettings } from "../cache/templates/settings";
import { CHAT_STOPS, stopsBefore, type StopRules } from "../cache/templates/view";
import { readsSpellings, SPELLED_MISS } from "../cache/templates/spelled";
import { weighUnstored } from "../cache/templates/unstored";
import { ApiError } from "../core/errors";
import { logEvent } from "../observability/log-event";
import { BINDINGS_HEADER, TEMPLATE_HEADER } from "../core/protocol";
import type { RecordInput } from "../store/tree/record";
import { readDeclaredEvidence, recordDeclaredEvidence } from "../store/templates/declared";
import { hasLiveTemplates, readTemplates } from "../store/templates/learned";
import { saveTemplates } from "../store/templates/save";
import { withTimeout } from "./lookup/read-through";

/** Where a plan reads a declared answer's evidence: the tree's database, the lookup bound, the hot-cache bound. */
export interface EvidenceStore {
  db: D1Database;
  timeoutMs: number;
  ttlMs: number;
}

/** What templates do for one request: its key (declared or concrete), rendering, learned lookup, learning. */
export interface TemplatePlan {
  key: RequestKey;
  /**
   * A stored answer with the request's declared values in it; null (a miss)
   * when they cannot be rendered, or when the answer has not been confirmed
   * for values other than this binding's (declaredServes). Never throws.
   */
  render(answer: StoredAnswer, store: EvidenceStore): Promise<StoredAnswer | null>;
  /** After the model's answer to this request was recorded: notes the binding it answered (declared trees). Never throws. */
  confirm(db: D1Database, recorded: RecordInput): Promise<void>;
  /**
   * After a generation that was not recorded: when the model answered this declared request with an answer
   * that could not be stored (unstoredAnswerOf), notes it as the binding's answer, so that the node stops
   * serving other values (the model answered it two ways), and weighs the learned templates that fit it
   * against that answer (unstored.ts: refuted or fenced, as a recorded answer would). `other`: the id of an
   * answer the caller could not even read (a view's answer with no chat view), noted the same way. Never throws.
   */
  unrecorded(db: D1Database, other?: string): Promise<void>;
  /**
   * The learned-template answer for an exact miss, or null. Never throws.
   * A tree known (within `presenceTtlMs`) to have no live templates costs no query. `hasTemplates`, what the
   * tree's object just read, is believed over that memo and refreshes it (learning is deferred: docs/templates.md).
   */
  learned(db: D1Database, timeoutMs: number, presenceTtlMs?: number, hasTemplates?: boolean): Promise<{ answer: StoredAnswer; template: string } | null>;
  /** Whether the model's answer to this request may teach templates (not when a number in it was sent spelled otherwise: spelled.ts). */
  induction: boolean;
  /** Headers of an exact hit: `muscle-mem-template: declared` in a declared tree. */
  hitHeaders: Record<string, string>;
  /** Why a template that could have served this request did not, once render and learned ran (one line, header-safe), or null. */
  templateMiss(): string | null;
}

/** The template miss reason when the template store could not be read in time (the request went to the model). */
export const STORE_UNREADABLE = "template store not readable in time: the request went to the model";

/** Reads `muscle-mem-bindings`; a malformed header is a 400 in the error envelope. */
export function readBindings(headers: Headers): Bindings | null {
  const parsed = parseBindings(headers.get(BINDINGS_HEADER));
  if (!parsed.ok) throw new ApiError("invalid_request", parsed.message, BINDINGS_HEADER);
  return parsed.bindings;
}

/**
 * Plans templates for a keyed request: with bindings, the request moves to
 * its declared tree (unless its values collide, then it stays concrete). A key
 * already declared (`key.declared`: a view's, src/cache/templates/view-declared.ts)
 * is planned as it is; `stops` are the API's stop rules (a view's; chat's by default).
 */
export function planTemplates(
  concrete: RequestKey,
  bindings: Bindings | null,
  headers: Headers,
  settings: TemplateSettings,
  stops: StopRules = CHAT_STOPS,
): TemplatePlan {
  const key = (bindings && withDeclared(concrete, bindings)) || concrete;
  const induction = settings.induction && !inductionOffFor(headers);
  // A number sent spelled otherwise (`2.0`): its hash reads the text, its stored message (what templates read) the value.
  const spelled = readsSpellings(key);
  const declared = key.declared;
  const binding = declared ? bindingDigestOf(declared) : "";
  let miss: string | null = null;
  /** Why a learned template's rendered answer was not served (where the model stops): said before any other reason. */
  let stopMiss: string | null = null;
  const noteAnswer = async (db: D1Database, answer: string): Promise<void> => {
    if (!declared) return;
    try {
      await recordDeclaredEvidence(db, { treeId: key.treeId, key: key.key, answer, binding });
      declaredMemo.delete(key.key);
    } catch (error) {
      logEvent("error", "declared_evidence_write_failed", { tree: key.treeId, error: String(error) });
    }
  };
  /**
   * Why another binding's values may not go in this answer where the model stops (view.ts stopsBefore: an answer
   * the token limit cut, a stop sequence of the request, a limit it may not fit), or null. The binding the answer
   * was recorded for is served its own answer as the model sent it.
   */
  const otherValuesStop = (evidence: readonly DeclaredConfirmation[], answer: StoredAnswer): string | null => {
    if (!declared || evidence.some((e) => e.answer === answer.hash && e.binding === binding && !e.damaged)) return null;
    const rendered = render(answer);
    const stopped = rendered && stopsBefore(stops, key.frameJson, rendered);
    return stopped ? `declared answer not served for these values: ${stopped}` : null;
  };
  const render = (answer: StoredAnswer): StoredAnswer | null => {
    if (!declared) return answer;
    const message = renderDeclared(answer.message, declared);
    return message ? { ...answer, message } : null;
  };
  return {
    key,
    render: async (answer, store) => {
      if (!declared) return answer;
      try {
        const evidence = await withTimeout(evidenceAt(store.db, key.key, store.ttlMs), store.timeoutMs, "declared evidence");
        const refused = declaredRefusal(evidence, answer.hash, binding, settings.declaredMinBindings) ?? otherValuesStop(evidence, answer);
        miss = refused && headerSafe(refused);
        return refused === null ? render(answer) : null;
      } catch (error) {
        logEvent("error", "declared_evidence_failed", { tree: key.treeId, error: String(error) });
        miss ??= STORE_UNREADABLE;
        return null;
      }
    },
    confirm: (db, recorded) => noteAnswer(db, recorded.answer.hash),
    unrecorded: async (db, other) => {
      const answer = declared && (unstoredAnswerOf(declared) ?? other);
      if (!answer) return;
      await noteAnswer(db, answer);
      if (induction) await refuteByUnstored(db, key, settings);
    },
    induction: induction && !spelled,
    hitHeaders: key.declared ? { [TEMPLATE_HEADER]: "declared" } : {},
    templateMiss: () => stopMiss ?? miss,
    learned: async (db, timeoutMs, presenceTtlMs = 0, hasTemplates?: boolean) => {
      if (!induction) return null;
      if (spelled) {
        miss ??= SPELLED_MISS;
        return null;
      }
      try {
        if (hasTemplates !== undefined) notePresence(key.treeId, hasTemplates, presenceTtlMs);
        if (!(await withTimeout(treeHasTemplates(db, key.treeId, presenceTtlMs), timeoutMs, "template presence"))) return null;
        const outcome = await withTimeout(readLearned(db, key, settings), timeoutMs, "template lookup");
        if (!("answer" in outcome)) {
          if (outcome.miss !== undefined) miss ??= headerSafe(outcome.miss);
          return null;
        }
        const found = outcome;
        const answer = render(found.answer);
        if (!answer) return null;
        // Where the model stops depends on the values (stopsBefore): a cut answer, a stop sequence, a limit it may not fit.
        const stopped = stopsBefore(stops, key.frameJson, answer);
        if (stopped !== null) {
          stopMiss = headerSafe(`template ${found.template}'s answer is not served: ${stopped}`);
          return null;
        }
        return { answer, template: found.template };
      } catch (error) {
        logEvent("error", "template_lookup_failed", { tree: key.treeId, error: String(error) });
        miss ??= STORE_UNREADABLE;
        return null;
      }
    },
  };
}

/** Entries per isolate memo (declared evidence, template presence); a full memo starts over. */
const PRESENCE_MAX = 10_000;

/** Per isolate: the declared evidence read at a request key, and until when it may be believed (the hot-cache bound). */
const declaredMemo = new Map<string, { evidence: DeclaredConfirmation[]; until: number }>();

async function evidenceAt(db: D1Database, key: string, ttlMs: number, now = Date.now()): Promise<DeclaredConfirmation[]> {
  const known = declaredMemo.get(key);
  if (known && known.until > now) return known.evidence;
  const evidence = await readDeclaredEvidence(db, key);
  if (ttlMs > 0) {
    if (declaredMemo.size >= PRESENCE_MAX) declaredMemo.clear();
    declaredMemo.set(key, { evidence, until: now + ttlMs });
  }
  return evidence;
}

/** Per isolate: whether a tree has live templates, and until when that may be believed. */
const presence = new Map<string, { has: boolean; until: number }>();

/**
 * Whether a tree has live learned templates, remembered for `ttlMs` (the
 * hot-cache bound). A template learned meanwhile is served at most that much
 * later, which is a miss, never a wrong answer; a stale "yes" costs only the
 * template query it would have cost anyway.
 */
async function treeHasTemplates(db: D1Database, treeId: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const known = presence.get(treeId);
  if (known && known.until > now) return known.has;
  const has = await hasLiveTemplates(db, treeId);
  notePresence(treeId, has, ttlMs, now);
  return has;
}

/** Remembers for `ttlMs` what was just read of a tree's live templates (by this isolate or by the tree's object). */
function notePresence(treeId: string, has: boolean, ttlMs: number, now = Date.now()): void {
  if (ttlMs <= 0) {
    presence.delete(treeId);
    return;
  }
  if (presence.size >= PRESENCE_MAX) presence.clear();
  presence.set(treeId, { has, until: now + ttlMs });
}

/** Forgets what this isolate believed about a tree's templates (its learner induced some). */
export function forgetTemplatePresence(treeId: string): void {
  presence.delete(treeId);
}

/** Per isolate: what each tree's learner last said it had learned (TreeLearner.learnSoon's reply). */
const learnerSeen = new Map<string, { epoch: string; induced: number }>();

/**
 * Notes what a tree's learner said it learned so far; true when that may be news to this isolate (a new
 * object run, or templates induced since this isolate last asked, or an isolate that never asked and sees
 * some): then what the isolate believed about the tree's templates is stale. Learning runs in the learner's
 * alarm, after the recording that taught it, so this isolate hears of it on its next recording at the latest;
 * a request in between is a miss, never a wrong answer.
 */
export function learnerNews(treeId: string, soFar: { epoch: string; induced: number }): boolean {
  const seen = learnerSeen.get(treeId);
  if (learnerSeen.size >= PRESENCE_MAX && !seen) learnerSeen.clear();
  learnerSeen.set(treeId, { epoch: soFar.epoch, induced: soFar.induced });
  if (!seen) return soFar.induced > 0;
  return seen.epoch !== soFar.epoch || soFar.induced > seen.induced;
}

/**
 * An answer the model gave a declared request that could not be stored: the learned templates that fit the
 * request are weighed against it (cache/templates/unstored.ts) and their new states stored (a refutation
 * is never undone: save.ts). Never throws: a failure leaves the templates as they were (logged).
 */
async function refuteByUnstored(db: D1Database, key: RequestKey, settings: TemplateSettings): Promise<void> {
  try {
    const candidates = await readTemplates(db, learnedLookup(key).keys, settings.maxTried + 1);
    const t = { root: key.treeId, hashes: key.path.map((s) => s.hash), messages: key.path.map((s) => hashForm(s.message)) };
    const changed = weighUnstored(candidates, t);
    if (changed.length > 0) await saveTemplates(db, [], changed);
  } catch (error) {
    logEvent("error", "template_unstored_failed", { tree: key.treeId, error: String(error) });
  }
}

/**
 * Learned-template lookup on an exact miss: one indexed query for the
 * templates under the request's lookup keys (one per anchor), then matching
 * in memory (cache/templates/learned-answer.ts). It reads one more than it
 * tries: a lookup that could not read every live template there misses.
 */
async function readLearned(
  db: D1Database,
  key: RequestKey,
  settings: TemplateSettings,
): Promise<{ answer: StoredAnswer; template: string } | { miss?: string }> {
  const lookup = learnedLookup(key);
  const candidates = await readTemplates(db, lookup.keys, settings.maxTried + 1);
  return learnedOutcome(key, lookup, candidates, settings.minBindings, settings.maxTried);
}
