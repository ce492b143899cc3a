import { canonicalJson, type CanonicalError } from "../../core/canonical";
import { storedAnswerJson } from "../../core/stored-json";
import { childHash, treeIdOf } from "../../core/hash";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES, oversized } from "../../core/limits";
import { hasLoneSurrogate } from "../../core/unicode";
import type { KeyOutcome, KeyScope, ProviderKey } from "../../cache/provider";
import { bodySpellings, NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { canonicalInput, canonicalOutput, isAssistantItem, type CallIds, type CanonicalNode } from "./canonical";
import { responsesBypassReason, responsesFrameJsonOf } from "./frame";
import type { ResponsesRequest } from "./schema";
import type { UpstreamContext } from "../../core/upstream-frame";
import { chainOf } from "./resolve";

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
 * `nodes` with the texts of the numbers each was sent with written otherwise than JSON.stringify would
 * (an `additional_tools` schema's `"maximum": 10.0`: src/core/number-text.ts) in its hash form, by input
 * item (read from the live body's text); an assistant node (a run of items) reads each item's under its place in the run.
 * The nodes themselves when there are none; the stored forms never hold them.
 */
function spelledNodes(nodes: CanonicalNode[], input: ResponsesRequest["input"], items: ReadonlyMap<number, Spelling[]> | undefined): CanonicalNode[] {
  if (!items || items.size === 0 || typeof input === "string") return nodes;
  const byNode = new Map<number, Spelling[]>();
  let node = -1;
  let inRun = 0;
  for (const [i, item] of input.entries()) {
    const assistant = isAssistantItem(item);
    if (!assistant || inRun === 0) node++;
    const prefix = assistant ? `/${inRun}` : "";
    inRun = assistant ? inRun + 1 : 0;
    const numbers = items.get(i);
    if (numbers) byNode.set(node, [...(byNode.get(node) ?? []), ...numbers.map(([pointer, text]): Spelling => [`${prefix}${pointer}`, text])]);
  }
  if (byNode.size === 0) return nodes;
  return nodes.map((n, i) => {
    const numbers = byNode.get(i);
    return numbers ? { hashed: { ...n.hashed, [NUMBERS_KEY]: numbers }, stored: n.stored } : n;
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
  // The body's numbers written otherwise than JSON.stringify would, read once for the frame and the input.
  const spelled = context?.raw === undefined ? undefined : (bodySpellings(context.raw, "input") ?? { top: [], items: undefined });
  const frameJson = responsesFrameJsonOf(body, context, spelled?.top);
  const treeId = treeIdOf(scope.tenant, scope.namespace, frameJson);
  const path = walkNodes(treeId, spelledNodes(canonical.nodes, body.input, spelled?.items));
  const tooLarge = oversized(frameJson, path, scope.maxMessageBytes);
  if (tooLarge) return { ok: false, bypass: tooLarge };
  const key = path[path.length - 1].hash;
  // Without `store: false` the client may chain on the answer's id (`previous_response_id`): a template's answer,
  // which is no stored node, is kept before it is served so that the id resolves (./resolve.ts).
  const chain = body.store === false ? {} : { chain: chainOf(body, treeId, path) };
  return {
    ok: true,
    key: { tenant: scope.tenant, namespace: scope.namespace, treeId, frameJson, model: body.model ?? "", path, key, ids: canonical.ids, ...chain },
  };
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
  return { hash: childHash(key.key, canonicalJson(node.hashed)), json: storedAnswerJson({ ...node.stored, ...around }) };
}
