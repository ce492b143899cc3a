import { describe, expect, it } from "vitest";
import { MAX_SERVED_LINKS, type RecordedMessage, type RecordedPaths, type ServedAnswer } from "../../src/cache/provider";
import { keptRowOf } from "../../src/engine/served-answer";
import { keyResponsesAnswer, keyResponsesRequest, type ResponsesKey } from "../../src/providers/responses/key";
import { servedResponseId } from "../../src/providers/responses/previous";
import { servedIds } from "../../src/providers/responses/render";
import { resolvePreviousResponse } from "../../src/providers/responses/resolve";
import type { ResponsesRequest } from "../../src/providers/responses/schema";
import type { ProviderRequest } from "../../src/cache/provider";

/**
 * Chaining on template answers the Worker kept (src/store/tree/served-answers.ts) through the provider's seam: a
 * store of recorded paths (none here) and kept rows, as src/engine/recorded-paths.ts hands `resolve` the real one.
 */
const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };

function keyOf(body: ResponsesRequest): ResponsesKey {
  const keyed = keyResponsesRequest(body, scope);
  if (!keyed.ok) throw new Error(JSON.stringify(keyed));
  return keyed.key;
}

/** A store that holds no recorded node, only kept answers (by answer hash); counts the rows it reads. */
function keptOnly(rows: Map<string, ServedAnswer>): RecordedPaths & { reads: number } {
  return {
    reads: 0,
    pathTo: async (): Promise<RecordedMessage[] | null> => null,
    answerOfUpstreamId: async () => null,
    async servedAnswer(treeId, answerHash) {
      this.reads++;
      const row = rows.get(answerHash);
      return row && row.treeId === treeId ? row : null;
    },
  };
}

const request = (body: ResponsesRequest): ProviderRequest<ResponsesRequest> => ({
  body,
  raw: JSON.stringify(body),
  url: new URL("http://x/v1/responses"),
  headers: new Headers(),
});

/** Serves `output` as a template's answer to `key`: the row the engine keeps, and the served id. */
function serveKept(rows: Map<string, ServedAnswer>, key: ResponsesKey, output: unknown[]): { id: string; hash: string } {
  const answer = keyResponsesAnswer(key, output);
  if (!answer || !key.chain) throw new Error("no answer or no chain");
  rows.set(answer.hash, keptRowOf(key, key.chain, answer.hash, JSON.parse(answer.json)));
  return { id: servedResponseId(key.treeId, answer.hash), hash: answer.hash };
}

describe("chaining on kept template answers", () => {
  it("Should resolve a chain through two kept answers into the whole conversation, the second row holding only what follows the first", async () => {
    const rows = new Map<string, ServedAnswer>();
    const first = keyOf({ model: "gpt-x", input: [{ role: "user", content: "refund A-1" }] });
    expect(first.chain).toEqual({ base: first.treeId, links: 0 });
    const one = serveKept(rows, first, [{ type: "function_call", call_id: "c", name: "get_order", arguments: '{"id":"A-1"}' }]);

    const store = keptOnly(rows);
    const resolved = await resolvePreviousResponse(
      request({
        model: "gpt-x",
        previous_response_id: one.id,
        input: [{ type: "function_call_output", call_id: servedIds(one.hash, 0).call, output: "delivered" }],
      }),
      store,
    );
    const second = keyOf(resolved.body);
    // The follow-up walks through the kept answer: its row starts there (one link), with only the tool's result.
    expect(second.path.map((s) => s.hash).slice(0, 2)).toEqual([first.key, one.hash]);
    expect(second.chain).toEqual({ base: one.hash, links: 1 });
    const two = serveKept(rows, second, [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Refunded." }] }]);
    expect(rows.get(two.hash)?.tail.map((s) => s.hash)).toEqual([second.key]);

    const third = await resolvePreviousResponse(request({ model: "gpt-x", previous_response_id: two.id, input: "thanks" }), keptOnly(rows));
    const items = third.body.input as Array<Record<string, unknown>>;
    expect(items.map((i) => i.type ?? i.role)).toEqual(["user", "function_call", "function_call_output", "message", "user"]);
    expect(
      keyOf(third.body)
        .path.slice(0, 4)
        .map((s) => s.hash),
    ).toEqual([first.key, one.hash, second.key, two.hash]);
  });

  it("Should leave an id as sent when its kept answer is another tree's, unknown, or its row does not lead to its parent", async () => {
    const rows = new Map<string, ServedAnswer>();
    const first = keyOf({ model: "gpt-x", input: "refund A-1" });
    const one = serveKept(rows, first, [{ type: "function_call", call_id: "c", name: "get_order", arguments: "{}" }]);
    const other = keyOf({ model: "gpt-y", input: "refund A-1" });
    for (const id of [servedResponseId(other.treeId, one.hash), servedResponseId(first.treeId, "f".repeat(32))]) {
      const sent = request({ model: "gpt-x", previous_response_id: id, input: "next" });
      expect(await resolvePreviousResponse(sent, keptOnly(rows))).toBe(sent);
    }
    // A row whose messages do not lead to the answer's parent is not read.
    const kept = rows.get(one.hash);
    if (!kept) throw new Error("not kept");
    const sent = request({ model: "gpt-x", previous_response_id: one.id, input: "next" });
    expect(await resolvePreviousResponse(sent, keptOnly(rows))).not.toBe(sent);
    rows.set(one.hash, { ...kept, parent: "e".repeat(32) });
    expect(await resolvePreviousResponse(sent, keptOnly(rows))).toBe(sent);
  });

  it("Should read at most MAX_SERVED_LINKS kept answers, and keep the whole conversation once a chain is that deep", async () => {
    const rows = new Map<string, ServedAnswer>();
    let key = keyOf({ model: "gpt-x", input: "step 0" });
    let served = serveKept(rows, key, [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok 0" }] }]);
    for (let i = 1; i <= MAX_SERVED_LINKS + 2; i++) {
      const store = keptOnly(rows);
      const resolved = await resolvePreviousResponse(request({ model: "gpt-x", previous_response_id: served.id, input: `step ${i}` }), store);
      expect(resolved.body.previous_response_id).toBeUndefined();
      expect(store.reads).toBeLessThanOrEqual(MAX_SERVED_LINKS);
      key = keyOf(resolved.body);
      expect(key.path).toHaveLength(2 * i + 1);
      // A chain as deep as the bound starts over from the root: the next row holds the whole conversation.
      expect(key.chain?.links).toBe(i % MAX_SERVED_LINKS);
      served = serveKept(rows, key, [{ type: "message", role: "assistant", content: [{ type: "output_text", text: `ok ${i}` }] }]);
    }
  });
});
