import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical";
import type { CanonicalMessage } from "./messages";

/** 128-bit hex digest of a string (SHA-256, truncated). Synchronous: no await per message. */
export function digest(input: string): string {
  return createHash("sha256").update(input).digest("hex").slice(0, 32);
}

/** The tenant is a hash of the upstream credential; the raw key never leaves this function. */
export function tenantOf(credential: string | null | undefined): string {
  return digest(`tenant\u0000${credential ?? ""}`);
}

/** h0: the root of a tree, from tenant, namespace and the canonical frame. */
export function treeIdOf(tenant: string, namespace: string, frameJson: string): string {
  return digest(`tree\u0000${tenant}\u0000${namespace}\u0000${frameJson}`);
}

/** h_i = H(h_{i-1}, canonical(m_i)). */
export function childHash(parent: string, canonicalMessageJson: string): string {
  return digest(`${parent}\u0000${canonicalMessageJson}`);
}

/** One step of a walk: the node's hash, its parent and the message as stored (JSON and object). */
export interface PathStep {
  hash: string;
  parent: string;
  json: string;
  message: CanonicalMessage;
}

/**
 * The path from the root to h_n, one step per message. Hashes come from the
 * canonical `messages`; `stored` (default: the same) is what a node keeps.
 */
export function walk(root: string, messages: readonly CanonicalMessage[], stored: readonly CanonicalMessage[] = messages): PathStep[] {
  const steps: PathStep[] = [];
  let parent = root;
  for (let i = 0; i < messages.length; i++) {
    const canonical = canonicalJson(messages[i]);
    const hash = childHash(parent, canonical);
    const json = stored[i] === messages[i] ? canonical : canonicalJson(stored[i]);
    steps.push({ hash, parent, json, message: stored[i] });
    parent = hash;
  }
  return steps;
}
