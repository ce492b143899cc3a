/** One malformed or hostile request of the corpus. */
export interface CorpusCase {
  name: string;
  route: "/v1/chat/completions" | "/v1/messages";
  method?: string;
  /** Extra or replacing headers; `content-type` defaults to application/json. */
  headers?: Record<string, string>;
  /** The raw body as sent (already serialised). */
  body: string;
  /**
   * `reject`: the Worker must answer 4xx in its error envelope and store nothing.
   * `either`: a 4xx envelope, or a pass-through for the upstream to judge; never a 5xx of the Worker's own.
   */
  expect: "reject" | "either";
}
