/**
 * Whether an upstream answer's `content-type` says it is the form the API answers in, so that its body may be
 * recorded: a JSON answer's is JSON (`application/json`, `application/<x>+json`, any parameters such as a
 * charset) or absent; a stream's is `text/event-stream`. Anything else (a gateway's `text/html` or
 * `text/plain` around bytes that happen to parse) is relayed as sent and not recorded: a client such as the
 * `openai` package reads such a body as a string on the miss, and would get parsed JSON from a hit
 * (docs/reliability.md, "Gateways in front of the model, hunted"). Pure.
 *
 * @example recordableType("application/json; charset=utf-8", false) // true
 * @example recordableType("text/html", false) // false
 * @example recordableType(null, true) // false
 */
export function recordableType(contentType: string | null, stream: boolean): boolean {
  const media = contentType?.split(";")[0].trim().toLowerCase();
  if (stream) return media === "text/event-stream";
  if (media === undefined || contentType?.trim() === "") return true;
  return media === "application/json" || /^application\/[!#$&^_.+\w-]+\+json$/.test(media);
}
