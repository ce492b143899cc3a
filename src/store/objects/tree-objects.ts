import { parseShardLocations, type LocationHint } from "../shards/locations";
import { dbFor } from "../shards/shards";

/**
 * The tree's Durable Objects by name: its writer (single flight and
 * serialised writes, `idFromName(treeId)` in TREE_WRITER) and its learner
 * (template learning and the move's second queue, `idFromName(treeId)` in
 * TREE_LEARNER, so that joins and records never queue behind induction).
 * Both are created next to the primary of the tree's shard
 * when D1_SHARD_LOCATIONS names its location: a cold lookup then costs one far
 * call, Worker to object, and the object's D1 reads stay near.
 */
export function treeWriterOf(env: Env, treeId: string, shard?: string): ReturnType<Env["TREE_WRITER"]["get"]> {
  return env.TREE_WRITER.get(env.TREE_WRITER.idFromName(treeId), placement(env, treeId, shard));
}

/** The object that learns templates for a tree, apart from the tree's writer (src/store/objects/tree-learner.ts). */
export function treeLearnerOf(env: Env, treeId: string, shard?: string): ReturnType<Env["TREE_LEARNER"]["get"]> {
  return env.TREE_LEARNER.get(env.TREE_LEARNER.idFromName(treeId), placement(env, treeId, shard));
}

/**
 * The tree's hit counter (src/store/objects/hit-tally.ts). Not placed: it writes D1
 * at most once per TALLY_FLUSH_MS, far from the hot path.
 */
export function hitTallyOf(env: Env, treeId: string): ReturnType<Env["HIT_TALLY"]["get"]> {
  return env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId));
}

let parsed: { value: string | undefined; hints: ReadonlyMap<string, LocationHint> } | undefined;

/**
 * The hint per shard, read once per isolate by `Config.shardLocations`' rule (src/core/shard-vars.ts); an
 * invalid value places objects without hints (src/config.ts logs it: `config_invalid`).
 */
function hintsOf(env: Env): ReadonlyMap<string, LocationHint> {
  const value = env.D1_SHARD_LOCATIONS;
  if (parsed?.value === value) return parsed.hints;
  const result = parseShardLocations(value);
  parsed = { value, hints: result.ok ? result.hints : new Map() };
  return parsed.hints;
}

/**
 * The stub options for a tree: the location hint of its shard's primary, or
 * none (unset, invalid, or a shard this Worker cannot name). `shard` is the
 * tree's shard as the caller read it from the directory; without it, the
 * hash rule's. A hint only places an object when it is first created: an
 * object that exists stays where it is, also after its tree moves shard.
 */
export function placement(env: Env, treeId: string, shard?: string): DurableObjectNamespaceGetDurableObjectOptions | undefined {
  const hints = hintsOf(env);
  if (hints.size === 0) return undefined;
  try {
    const hint = hints.get(shard ?? dbFor(env, treeId).name);
    return hint ? { locationHint: hint } : undefined;
  } catch {
    return undefined;
  }
}
