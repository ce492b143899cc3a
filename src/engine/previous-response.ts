import { inputItemsOf, parseServedResponseId, withPreviousInput } from "../providers/responses/previous";
import type { ResponsesRequest } from "../providers/responses/schema";
import type { ProviderRequest } from "../cache/provider";
import { nodeOwner, readPathRows } from "../store/tree/node-read";
import { shardFor } from "../store/shards/directory";

/**
 * Resolves `previous_response_id` when it is a response the Worker served
 * (`resp_mm<tree><answer>…`) in a tree of this tenant: the request gets the
 * whole conversation in `input` and no id, so it is keyed like a full
 * request and a miss sends the upstream everything it needs. Any other id
 * (the upstream's own, another tenant's, a pruned node) leaves the request as
 * sent; it is then passed through.
 */
export async function resolvePreviousResponse(request: ProviderRequest<ResponsesRequest>, context: { env: Env; tenant: string }): Promise<ProviderRequest<ResponsesRequest>> {
  const id = request.body.previous_response_id;
  const served = id ? parseServedResponseId(id) : null;
  if (!served) return request;
  const db = (await shardFor(context.env, served.treeId)).db;
  const owner = await nodeOwner(db, served.answerHash);
  if (!owner || owner.tenant !== context.tenant || owner.treeId !== served.treeId) return request;
  const rows = await readPathRows(db, served.answerHash);
  const items = inputItemsOf(rows.map((row) => JSON.parse(row.message) as Record<string, unknown>), served.answerHash);
  if (!items || rows.at(-1)?.hash !== served.answerHash) return request;
  const body = withPreviousInput(request.body, items);
  resolvedIds.set(body, id as string);
  return { ...request, body, raw: JSON.stringify(body) };
}

/** The `previous_response_id` each resolved body was resolved from (the body no longer holds it). */
const resolvedIds = new WeakMap<ResponsesRequest, string>();

/**
 * The `previous_response_id` the client sent: the API echoes it in the response, so a hit says it too,
 * also when the Worker resolved it into the conversation (then the body keyed and rendered has none).
 */
export function previousResponseIdOf(body: ResponsesRequest): string | null {
  return resolvedIds.get(body) ?? body.previous_response_id ?? null;
}
