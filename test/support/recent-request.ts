import type { RecentRequest } from "../../src/store/tree/recent-requests";

/**
 * A request-log row (src/store/tree/recent-requests.ts RecentRequest) for tests: one hit on node `n1` of tree
 * `t1` (200, 10 ms, 100 + 20 tokens saved, alone in its row), with `over`'s fields instead.
 *
 * @example recentRequest({ outcome: "miss", node: null, prompt_tokens: null, completion_tokens: null })
 */
export function recentRequest(over: Partial<RecentRequest> = {}): RecentRequest {
  return {
    at: 1,
    tree_id: "t1",
    route: "/v1/chat/completions",
    outcome: "hit",
    status: 200,
    latency_ms: 10,
    prompt_tokens: 100,
    completion_tokens: 20,
    node: "n1",
    template_id: null,
    reason: null,
    count: 1,
    request_id: null,
    explanation: null,
    error: null,
    tenant: null,
    ...over,
  };
}
