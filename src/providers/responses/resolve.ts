import type { ProviderRequest, RecordedPaths } from "../../cache/provider";
import { inputItemsOf, parseServedResponseId, withPreviousInput } from "./previous";
import type { ResponsesRequest } from "./schema";

/** The `previous_response_id` each resolved body was resolved from (the body no longer holds it). */
const resolvedIds = new WeakMap<ResponsesRequest, string>();

/**
 * Resolves `previous_response_id` when it is a response the Worker served
 * (`resp_mm<tree><answer>…`) in a tree of this tenant: the request gets the
 * whole conversation in `input` and no id, so it is keyed like a full
 * request and a miss sends the upstream everything it needs. Any other id
 * (the upstream's own, another tenant's, a pruned node) leaves the request as
 * sent; it is then passed through.
 */
export async function resolvePreviousResponse(request: ProviderRequest<ResponsesRequest>, store: RecordedPaths): Promise<ProviderRequest<ResponsesRequest>> {
  const id = request.body.previous_response_id;
  const served = id ? parseServedResponseId(id) : null;
  if (!id || !served) return request;
  const rows = await store.pathTo(served.treeId, served.answerHash);
  if (!rows || rows.at(-1)?.hash !== served.answerHash) return request;
  const items = inputItemsOf(
    rows.map((row) => JSON.parse(row.message) as Record<string, unknown>),
    served.answerHash,
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
