import { REQUEST_ID_HEADER } from "../core/protocol";

/** Ids a client may choose: short, printable, no spaces or quotes (they end up in logs). */
const SANE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The request's id: the incoming `x-request-id` when it is sane (1–128 of
 * `A–Z a–z 0–9 . _ : @ / + = -`), otherwise a fresh UUID.
 *
 * @example requestIdOf(new Headers({ "x-request-id": "run-42" })) // "run-42"
 */
export function requestIdOf(headers: Headers): string {
  const incoming = headers.get(REQUEST_ID_HEADER)?.trim();
  return incoming && SANE_ID.test(incoming) ? incoming : crypto.randomUUID();
}
