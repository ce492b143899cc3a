import { createHash } from "node:crypto";
import { canonicalJson, memoisedCanonicalJson } from "./canonical";
import type { CanonicalMessage } from "./messages";
import { BoundedMemo } from "./memo";

/** 128-bit hex digest of a string (SHA-256, truncated). Synchronous: no await per message. */
export function digest(input: string): string {
  return createHash("sha256").update(input).digest("hex").slice(0, 32);
}

/** The tenant is a hash of the upstream credential; the raw key never leaves this function. */
export function tenantOf(credential: string | null | undefined): string {
  return digest(`tenant\u0000${credential ?? ""}`);
}

/** (tenant, namespace) pairs kept per frame in `knownTrees`: past it the frame's map starts again. */
const MAX_TREE_SCOPES = 64;

/**
 * Tree ids this isolate has computed, by canonical frame JSON, then tenant and namespace. The frame's
 * text comes from canonicalJsonMemo as the same string each time, whose hash the runtime keeps with it,
 * so a known tree costs a map lookup where the digest would hash the frame (a 14-tool schema is ~8 KB).
 */
const knownTrees = new BoundedMemo<Map<string, string>>(4 * 1024 * 1024, () => MAX_TREE_SCOPES * 128);

/** h0: the root of a tree, from tenant, namespace and the canonical frame. */
export function treeIdOf(tenant: string, namespace: string, frameJson: string): string {
  const scope = `${tenant}\u0000${namespace}`;
  let byScope = knownTrees.get(frameJson);
  const known = byScope?.get(scope);
  if (known !== undefined) return known;
  const treeId = digest(`tree\u0000${scope}\u0000${frameJson}`);
  if (!byScope) knownTrees.set(frameJson, (byScope = new Map()));
  else if (byScope.size >= MAX_TREE_SCOPES) byScope.clear();
  byScope.set(scope, treeId);
  return treeId;
}

/** h_i = H(h_{i-1}, canonical(m_i)). */
export function childHash(parent: string, canonicalMessageJson: string): string {
  return digest(`${parent}\u0000${canonicalMessageJson}`);
}

/** One step of a walk: the node's hash, its parent, its role and the message as stored (JSON and object). */
export interface PathStep {
  hash: string;
  parent: string;
  role: CanonicalMessage["role"];
  json: string;
  message: CanonicalMessage;
}

/** A path step already computed in this isolate: h_i and the canonical JSON of m_i. */
interface KnownStep {
  hash: string;
  canonical: string;
}

/**
 * Steps this isolate has hashed, keyed by `h_{i-1}` and the canonical message
 * as JSON.stringify writes them (`[parent, message]`). Equal stringify output means an equal value,
 * hence the same canonical JSON and the same h_i, so a hit is always right;
 * the key is 4x cheaper to build than RFC 8785 and skips the SHA-256. A
 * conversation that grows by one message hashes one new message.
 */
const knownSteps = new BoundedMemo<KnownStep>(16 * 1024 * 1024, (step) => step.hash.length + step.canonical.length);

/** h_i and canonical(m_i) for one step, from the isolate's memo or computed. */
function stepOf(parent: string, message: CanonicalMessage): KnownStep {
  // One stringify (the parent is 32 hex digits): a joined key would copy the message's text again to hash it.
  const memoKey = JSON.stringify([parent, message]);
  const known = knownSteps.get(memoKey);
  if (known) return known;
  const canonical = canonicalJson(message);
  const step = { hash: childHash(parent, canonical), canonical };
  knownSteps.set(memoKey, step);
  return step;
}

/**
 * Stored forms that are not the hash form (an assistant message whose arguments were not sent as canonical
 * text, e.g. `{"a": 1}` with a space: 11% of the workloads' messages), as canonical JSON, keyed by their
 * JSON.stringify text as `knownSteps` is: without it each was canonicalised again on every request. A memo
 * of its own, so that many stored forms never push the frame out of canonicalJsonMemo's.
 */
const storedJsonOf = memoisedCanonicalJson(4 * 1024 * 1024);

/**
 * The path from the root to h_n, one step per message. Hashes come from the
 * canonical `messages`; `stored` (default: the same) is what a node keeps.
 * Each message is hashed once per isolate (see `knownSteps`).
 */
export function walk(root: string, messages: readonly CanonicalMessage[], stored: readonly CanonicalMessage[] = messages): PathStep[] {
  const steps: PathStep[] = [];
  let parent = root;
  for (let i = 0; i < messages.length; i++) {
    const { hash, canonical } = stepOf(parent, messages[i]);
    const json = stored[i] === messages[i] ? canonical : storedJsonOf(stored[i]);
    steps.push({ hash, parent, role: stored[i].role, json, message: stored[i] });
    parent = hash;
  }
  return steps;
}
