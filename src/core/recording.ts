/**
 * The recording: what a miss hands the store once the model's answer is known complete. Shared by the
 * providers (which read an answer into one), the engine (which settles it) and the store (which writes it).
 */

/** One path node to make sure of: the request's messages, in order. */
export interface PathNode {
  hash: string;
  parent: string;
  role: string;
  json: string;
}

/** Everything the tree's Durable Object needs to record one generation. */
export interface RecordInput {
  treeId: string;
  tenant: string;
  namespace: string;
  model: string;
  frameJson: string;
  path: PathNode[];
  answer: PathNode & {
    finishReason: string;
    promptTokens: number;
    completionTokens: number;
    latencyMs: number;
  };
  /**
   * The id the upstream gave this response (the Responses API's `resp_…`), when it issued one, and its
   * `call_id` of each of the answer's calls, in order: recorded per tenant with the answer, so that a later
   * `previous_response_id` naming it resolves to this answer with the call ids the client was given.
   */
  upstream?: { id: string; callIds: string[] };
}

/** Where a generation belongs: its tree, h_n (`key`) and the path to it. */
export interface RecordTarget {
  treeId: string;
  tenant: string;
  namespace: string;
  model: string;
  frameJson: string;
  key: string;
  path: PathNode[];
}

/**
 * The record of an answer at `target`. Token counts the upstream did not
 * report (a stream without usage) are estimated at 4 characters a token.
 */
export function recordInputOf(
  target: RecordTarget,
  answer: { hash: string; json: string },
  finishReason: string,
  usage: { prompt?: number | null; completion?: number | null },
  rawLength: number,
  latencyMs: number,
): RecordInput {
  return {
    treeId: target.treeId,
    tenant: target.tenant,
    namespace: target.namespace,
    model: target.model,
    frameJson: target.frameJson,
    path: target.path,
    answer: {
      hash: answer.hash,
      parent: target.key,
      role: "assistant",
      json: answer.json,
      finishReason,
      promptTokens: usage.prompt ?? Math.ceil(rawLength / 4),
      completionTokens: usage.completion ?? Math.ceil(answer.json.length / 4),
      latencyMs,
    },
  };
}

/** What the model produced, ready to record; null when it must not be recorded. */
export type Recording = RecordInput | null;

/** How one API (chat completions, messages) turns its upstream's answer into a recording. */
export interface AnswerReader {
  /** A whole JSON answer body; null when it is not a complete, cacheable answer. */
  fromJson(text: string, latencyMs: number): Recording;
  /** A fresh assembler for one stream: bytes in, at the end the recording (null when cut or erroneous). */
  stream(): { feed(bytes: Uint8Array): void; finish(latencyMs: number): Recording };
}
