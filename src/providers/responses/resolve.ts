import type { ProviderRequest, RecordedPaths } from "../../cache/provider";
import { inputItemsOf, type LastCallIds, parseServedResponseId, upstreamResponseId, withPreviousInput } from "./previous";
import type { ResponsesRequest } from "./schema";

/** The `previous_response_id` each resolved body was resolved from (the body no longer holds it). */
const resolvedIds = new WeakMap<ResponsesRequest, string>();

/**
 * The answer an id names and the call ids the client was given for its calls: a served id names its tree and
 * answer (the calls' ids are the served ones); an upstream's id, the answer this tenant recorded under it
 * (the upstream's call ids, as the miss relayed them).
 */
async function answerNamed(id: string, store: RecordedPaths): Promise<{ treeId: string; answerHash: string; last: LastCallIds } | null> {
  const served = parseServedResponseId(id);
  if (served) return { ...served, last: served.answerHash };
  if (!upstreamResponseId.safeParse(id).success) return null;
  const recorded = await store.answerOfUpstreamId(id);
  return recorded && { treeId: recorded.treeId, answerHash: recorded.answerHash, last: recorded.callIds };
}

/**
 * Resolves `previous_response_id` when it is a response the Worker served
 * (`resp_mm<tree><answer>…`) in a tree of this tenant, or an upstream's own
 * id of an answer this tenant recorded (its `upstreamId`): the request gets
 * the whole conversation in `input` and no id, so it is keyed like a full
 * request and a miss sends the upstream everything it needs. Any other id
 * (one never recorded, another tenant's, a pruned answer's) leaves the
 * request as sent; it is then passed through.
 */
export async function resolvePreviousResponse(request: ProviderRequest<ResponsesRequest>, store: RecordedPaths): Promise<ProviderRequest<ResponsesRequest>> {
  const id = request.body.previous_response_id;
  if (!id) return request;
  const target = await answerNamed(id, store);
  if (!target) return request;
  const rows = await store.pathTo(target.treeId, target.answerHash);
  if (!rows || rows.at(-1)?.hash !== target.answerHash) return request;
  const items = inputItemsOf(
    rows.map((row) => JSON.parse(row.message) as Record<string, unknown>),
    target.last,
  );
  if (!items) return request;
  const body = withPreviousInput(request.body, items);
  resolvedIds.set(body, id);
  return { ...request, body, raw: JSON.stringify(body) };
}

/**
 * The `previous_response_id` the client sent: the API echoes it in the response, so a hit says it too,
 * also when the Worker resolved it into the conversation (then the body keyed and rendered has none).
 */
export function previousResponseIdOf(body: ResponsesRequest): string | null {
  return resolvedIds.get(body) ?? body.previous_response_id ?? null;
}
