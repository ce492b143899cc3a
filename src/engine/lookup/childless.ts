import { ExpiringMap } from "../../core/expiring-map";

/** Leaves, trees and fast misses one isolate remembers at most (each entry is a hash and a number). */
export const CHILDLESS_MAX_ENTRIES = 10_000;

/**
 * What this isolate knows to have nothing under it, and since when: the fast
 * miss (docs/performance.md, "Fast miss"). A request whose path passes
 * through a node known to be childless cannot find answers at its h_n (every
 * answer there would be a descendant of that node), so it forwards to the
 * model with no store call before it, and joins single flight beside the
 * upstream request.
 *
 * Known, never guessed: a leaf is remembered only from what the store itself
 * read. The tree's object reports, for each recording, whether its batch
 * inserted the answer node (`answerIsNew`): a node is only ever stored with
 * all its ancestors, so a node the batch had to insert had no descendants.
 * The leaf is believed from the moment the record was sent (before the
 * batch ran) until that moment plus `boundMs` (HOT_CACHE_TTL_MS, the bound
 * on anything this isolate believes about the store): a child recorded
 * elsewhere meanwhile is at worst a miss within the bound, never a wrong
 * replay, since nothing is ever served from this knowledge. A recording in
 * this isolate forgets every node of its path at once (each has a child now),
 * and a prune or import here forgets everything (`clear`).
 *
 * On a route that serves learned templates, a template could still answer
 * what the exact path cannot: a fast miss there also needs the tree's object
 * to have said, within the bound, that the tree has no live templates
 * (`noteNoTemplates`, from the cold lookup's own read).
 */
export class ChildlessMemory {
  private readonly leaves: ExpiringMap<number>;
  private readonly templateFree: ExpiringMap<number>;
  private readonly inFlight: ExpiringMap<true>;

  constructor(
    readonly boundMs: number,
    maxEntries = CHILDLESS_MAX_ENTRIES,
  ) {
    this.leaves = new ExpiringMap(maxEntries);
    this.templateFree = new ExpiringMap(maxEntries);
    this.inFlight = new ExpiringMap(maxEntries);
  }

  /**
   * After this isolate's recording (sent at `sentAt`): the nodes of its path have a child now (forgotten);
   * its answer node, when the batch inserted it, has none (remembered from `sentAt`).
   */
  recorded(path: readonly string[], answer: string, answerIsNew: boolean, sentAt: number, now = Date.now()): void {
    for (const hash of path) this.leaves.delete(hash);
    if (answerIsNew && this.boundMs > 0 && sentAt + this.boundMs > now) this.leaves.set(answer, sentAt, sentAt + this.boundMs);
  }

  /** The tree's object read, at `readAt`, that `treeId` has no live learned templates. */
  noteNoTemplates(treeId: string, readAt: number, now = Date.now()): void {
    if (this.boundMs > 0 && readAt + this.boundMs > now) this.templateFree.set(treeId, readAt, readAt + this.boundMs);
  }

  /** Forgets that `treeId` had no templates (this isolate learned one). */
  forgetTemplates(treeId: string): void {
    this.templateFree.delete(treeId);
  }

  /**
   * The depth (1-based) of the deepest node of `path` known to be childless now, or null when none is (or
   * when `templates` is set and the tree is not known to be free of them). A request with this path misses.
   */
  knownLeaf(path: readonly string[], treeId: string, templates: boolean, now = Date.now()): number | null {
    if (this.boundMs <= 0) return null;
    if (templates && this.templateFree.get(treeId, now) === undefined) return null;
    for (let i = path.length - 1; i >= 0; i--) if (this.leaves.get(path[i], now) !== undefined) return i + 1;
    return null;
  }

  /**
   * Marks a fast miss of `key` as on its way (until its recording has settled, or `untilMs` at most): false
   * when one already is. A second identical request of this isolate then takes the looked-up path, which
   * joins the first one's flight and waits for its answer instead of generating again.
   */
  begin(key: string, untilMs: number, now = Date.now()): boolean {
    if (this.inFlight.get(key, now)) return false;
    this.inFlight.set(key, true, now + untilMs);
    return true;
  }

  /** The fast miss of `key` has settled. */
  end(key: string): void {
    this.inFlight.delete(key);
  }

  /** Forgets every leaf and template-free tree (a prune or an import in this isolate). */
  clear(): void {
    this.leaves.clear();
    this.templateFree.clear();
  }
}

let memory: ChildlessMemory | undefined;

/** This isolate's memory for a bound (HOT_CACHE_TTL_MS); a new bound starts it over. */
export function childlessMemory(boundMs: number): ChildlessMemory {
  if (memory?.boundMs !== boundMs) memory = new ChildlessMemory(boundMs);
  return memory;
}

/** Forgets that `treeId` had no learned templates (this isolate just learned one). */
export function forgetTemplateFree(treeId: string): void {
  memory?.forgetTemplates(treeId);
}

/** Forgets what this isolate knew to be childless (after a prune or an import here). */
export function forgetChildless(): void {
  memory?.clear();
}

/** How a fast miss's single-flight join turned out, counted per isolate (and logged): `duplicate` means another request led. */
export type FastJoin = "leader" | "duplicate" | "failed";

const joins: Record<FastJoin, number> = { leader: 0, duplicate: 0, failed: 0 };

/** Counts one fast miss's join. */
export function countFastJoin(outcome: FastJoin): void {
  joins[outcome]++;
}

/** This isolate's fast-miss joins so far, by outcome (for tests and the bench). */
export function fastJoins(): Readonly<Record<FastJoin, number>> {
  return { ...joins };
}
