import { type ChainBase, MAX_SERVED_LINKS, type ProviderRequest, type RecordedMessage, type RecordedPaths } from "../../cache/provider";
import { inputItemsOf, type LastCallIds, parseServedResponseId, upstreamResponseId, withPreviousInput } from "./previous";
import type { ResponsesRequest } from "./schema";

/** The `previous_response_id` each resolved body was resolved from (the body no longer holds it). */
const resolvedIds = new WeakMap<ResponsesRequest, string>();
/** The answer each resolved body's conversation was read up to, and through how many kept template answers. */
const resolvedBases = new WeakMap<ResponsesRequest, ChainBase>();

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
 * (`resp_mm<tree><answer>…`) in a tree of this tenant (a recorded answer, or a template's answer kept when it
 * was served: src/store/tree/served-answers.ts), or an upstream's own
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
  const path = await conversationTo(store, target.treeId, target.answerHash, typeof target.last === "string");
  if (!path) return request;
  const items = inputItemsOf(
    path.rows.map((row) => JSON.parse(row.message) as Record<string, unknown>),
    target.last,
  );
  if (!items) return request;
  const body = withPreviousInput(request.body, items);
  resolvedIds.set(body, id);
  resolvedBases.set(body, { base: target.answerHash, links: path.links });
  return { ...request, body, raw: JSON.stringify(body) };
}

/**
 * The conversation up to an answer, root first: its recorded path; for an answer the Worker served (`kept`),
 * else the template's answer it kept (the path to its base, its tail, the answer), reading at most
 * MAX_SERVED_LINKS kept answers. `links`: how many it read. Null when the answer resolves to nothing.
 */
async function conversationTo(
  store: RecordedPaths,
  treeId: string,
  answerHash: string,
  kept: boolean,
  depth = 0,
): Promise<{ rows: RecordedMessage[]; links: number } | null> {
  const rows = await store.pathTo(treeId, answerHash);
  if (rows && rows.at(-1)?.hash === answerHash) return { rows, links: 0 };
  if (!kept || depth >= MAX_SERVED_LINKS) return null;
  const served = await store.servedAnswer(treeId, answerHash);
  // Its messages must lead from its base to the answer's parent (a row that does not is not read).
  if (!served || (served.tail.at(-1)?.hash ?? served.base) !== served.parent) return null;
  const before = served.base === treeId ? { rows: [], links: 0 } : await conversationTo(store, treeId, served.base, true, depth + 1);
  if (!before) return null;
  return { rows: [...before.rows, ...served.tail, { hash: answerHash, message: served.answer }], links: before.links + 1 };
}

/**
 * Where the conversation of a request that may chain on a template's answer (`path`: its steps) can be read from
 * before its own steps: the answer its `previous_response_id` was resolved to when that is on its path and
 * fewer than MAX_SERVED_LINKS kept answers deep; else the root (the tree id).
 */
export function chainOf(body: ResponsesRequest, treeId: string, path: readonly { hash: string }[]): ChainBase {
  const resolved = resolvedBases.get(body);
  if (resolved && resolved.links < MAX_SERVED_LINKS && path.some((step) => step.hash === resolved.base)) return resolved;
  return { base: treeId, links: 0 };
}

/**
 * The `previous_response_id` the client sent: the API echoes it in the response, so a hit says it too,
 * also when the Worker resolved it into the conversation (then the body keyed and rendered has none).
 */
export function previousResponseIdOf(body: ResponsesRequest): string | null {
  return resolvedIds.get(body) ?? body.previous_response_id ?? null;
}
