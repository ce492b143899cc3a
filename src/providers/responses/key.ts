import { canonicalJson, type CanonicalError } from "../../core/canonical";
import { childHash, treeIdOf } from "../../core/hash";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES, oversized } from "../../core/limits";
import { hasLoneSurrogate } from "../../core/unicode";
import type { KeyOutcome, KeyScope, ProviderKey } from "../../cache/provider";
import { canonicalInput, canonicalOutput, type CallIds, type CanonicalNode } from "./canonical";
import { responsesBypassReason, responsesFrameJsonOf } from "./frame";
import type { ResponsesRequest } from "./schema";
import type { UpstreamContext } from "../../core/upstream-frame";

/** Where a Responses request sits in the trees, and the call ids its answer is numbered after. */
export interface ResponsesKey extends ProviderKey {
  ids: CallIds;
}

function failure(error: CanonicalError): KeyOutcome<ResponsesKey> {
  return error.kind === "invalid" ? { ok: false, invalid: { message: error.message, param: error.param } } : { ok: false, bypass: error.reason };
}

/** h_i = H(h_{i-1}, canonical(node_i)); each step stores its node with arguments as written. */
function walkNodes(root: string, nodes: readonly CanonicalNode[]): ProviderKey["path"] {
  let parent = root;
  return nodes.map((node) => {
    const hash = childHash(parent, canonicalJson(node.hashed));
    const step = { hash, parent, role: node.stored.role, json: canonicalJson(node.stored) };
    parent = hash;
    return step;
  });
}

/**
 * Keys a validated Responses request: frame (with the API name), tree id, canonical input, path hashes.
 * `context` is the live request's URL and headers (src/core/upstream-frame.ts); an imported line has none.
 */
export function keyResponsesRequest(
  body: ResponsesRequest,
  scope: KeyScope = { tenant: "", namespace: "default", maxMessageBytes: DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES },
  context?: UpstreamContext,
): KeyOutcome<ResponsesKey> {
  const reason = responsesBypassReason(body, context) ?? (hasLoneSurrogate(body) ? "lone surrogate" : null);
  if (reason) return { ok: false, bypass: reason };
  const canonical = canonicalInput(body.input);
  if (!canonical.ok) return failure(canonical.error);
  const frameJson = responsesFrameJsonOf(body, context);
  const treeId = treeIdOf(scope.tenant, scope.namespace, frameJson);
  const path = walkNodes(treeId, canonical.nodes);
  const tooLarge = oversized(frameJson, path, scope.maxMessageBytes);
  if (tooLarge) return { ok: false, bypass: tooLarge };
  const key = path[path.length - 1].hash;
  return { ok: true, key: { tenant: scope.tenant, namespace: scope.namespace, treeId, frameJson, model: body.model ?? "", path, key, ids: canonical.ids } };
}

/**
 * The model's output items as the answer node: call ids numbered after the
 * conversation's, hashed as a child of h_n, stored with the arguments as the
 * model wrote them, and with `around` (what the response carried around its output: ./envelope.ts) beside
 * them, outside the hash. Null when the output is not replayable.
 */
export function keyResponsesAnswer(key: ResponsesKey, output: readonly unknown[], around: Record<string, unknown> = {}): { hash: string; json: string } | null {
  const node = canonicalOutput(output, key.ids.clone());
  if (!node) return null;
  return { hash: childHash(key.key, canonicalJson(node.hashed)), json: canonicalJson({ ...node.stored, ...around }) };
}
