import { SERVED_ITEM_PREFIXES } from "./render";

const served = (id: unknown) => typeof id === "string" && SERVED_ITEM_PREFIXES.some((prefix) => id.startsWith(prefix));

/**
 * The body a miss sends upstream: the request as sent, except that the ids of
 * output items a hit served (`msg_mm…`, `fc_mm…`) are dropped from `input`,
 * so the upstream never sees an item id it did not issue. Ids are optional
 * on input items, and the cache never keyed them.
 */
export function responsesUpstreamBody(raw: string, input: unknown): string {
  if (!Array.isArray(input) || !input.some((item: { id?: unknown }) => served(item?.id))) return raw;
  const body = JSON.parse(raw) as { input: Array<Record<string, unknown>> };
  body.input = body.input.map((item) => {
    if (!served(item?.id)) return item;
    const { id: _id, ...rest } = item;
    return rest;
  });
  return JSON.stringify(body);
}
