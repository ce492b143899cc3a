import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { type Api, explained, sendOn } from "./explain-hunt.support";

/**
 * Why a new tree missed is told against the tenant's trees of the request's own API and namespace
 * (docs/api.md, "Why it missed"): a Responses request is never told that `instructions` differs from a chat
 * tree, nor a Messages request that `max_tokens` does. The first two cases failed before the fix (the nearest
 * tree was picked among every API's trees: the chat tree, with fewer differing fields).
 */

async function newTree(which: Api, model: string, body: Record<string, unknown>, key: string, headers: Record<string, string> = {}) {
  const id = `why-newtree-${crypto.randomUUID()}`;
  const { res } = await sendOn(which, model, body, key, id, headers);
  expect(res.headers.get("muscle-mem-cache")).toBe("miss");
  expect(res.headers.get("muscle-mem-miss")).toBe("new-tree");
  const row = await explained(id, key);
  expect(row.explanation?.kind).toBe("new-tree");
  return row;
}

const CHAT = { messages: [{ role: "user", content: "Where is order A-1?" }] };
const INPUT = { input: [{ role: "user", content: "Where is order A-1?" }] };

describe("why it missed: a new tree is compared with trees of its own API", () => {
  it("Should compare a new Responses request with the tenant's Responses tree, not a nearer chat tree", async () => {
    const key = newKey();
    const model = uniqueModel("why-newtree");
    const chatTree = await newTree("chat", model, CHAT, key);
    // Three frame fields away from the request below; the chat tree is two (`instructions`, the API).
    const responsesTree = await newTree("responses", model, { ...INPUT, instructions: "Be brief.", temperature: 0.5, top_p: 0.9, max_output_tokens: 64 }, key);
    expect(chatTree.tree_id).not.toBe(responsesTree.tree_id);

    const row = await newTree("responses", model, { ...INPUT, instructions: "Be brief." }, key);
    expect(row.explanation?.frame).toMatchObject({
      nearest_tree: responsesTree.tree_id,
      nearest_model: model,
      field: "max_output_tokens",
      diff: { incoming: "", recorded: "64" },
      trees_compared: 1,
    });
  });

  it("Should give no nearest tree when the tenant has none of the request's API", async () => {
    const key = newKey();
    const model = uniqueModel("why-newtree-none");
    await newTree("chat", model, CHAT, key);

    const messages = await newTree("messages", model, CHAT, key);
    expect(messages.explanation?.frame).toEqual({ nearest_tree: null, nearest_model: null, field: null, diff: null, trees_compared: 0 });
    const responses = await newTree("responses", model, INPUT, key);
    expect(responses.explanation?.frame).toEqual({ nearest_tree: null, nearest_model: null, field: null, diff: null, trees_compared: 0 });

    // Now the tenant has a Messages tree: a Messages request is compared with it, and with nothing else.
    const other = await newTree("messages", `${model}-b`, CHAT, key);
    expect(other.explanation?.frame).toMatchObject({ nearest_tree: messages.tree_id, field: "model", trees_compared: 1 });
  });

  it("Should find the tenant's tree of the request's API behind more recently hit trees of another", async () => {
    const key = newKey();
    const model = uniqueModel("why-newtree-many");
    const responsesTree = await newTree("responses", model, { ...INPUT, instructions: "Be brief." }, key);
    // DIVERGENCE_TREES (20) chat trees hit since: the read compares the 20 most recently hit trees of the request's API.
    for (let i = 0; i < 20; i++) await sendOn("chat", `${model}-c${i}`, CHAT, key, `why-newtree-c${i}-${model}`);
    await explained(`why-newtree-c19-${model}`, key);

    const row = await newTree("responses", model, { ...INPUT, instructions: "Be terse." }, key);
    expect(row.explanation?.frame).toMatchObject({ nearest_tree: responsesTree.tree_id, field: "instructions", trees_compared: 1 });
  });

  it("Should not compare with the tenant's trees in another namespace, where the request could not hit", async () => {
    const key = newKey();
    const model = uniqueModel("why-newtree-ns");
    const a = await newTree("responses", model, INPUT, key, { "muscle-mem-namespace": "desk-a" });

    const b = await newTree("responses", model, INPUT, key, { "muscle-mem-namespace": "desk-b" });
    expect(b.tree_id).not.toBe(a.tree_id);
    expect(b.explanation?.frame).toEqual({ nearest_tree: null, nearest_model: null, field: null, diff: null, trees_compared: 0 });

    const c = await newTree("responses", `${model}-b`, INPUT, key, { "muscle-mem-namespace": "desk-a" });
    expect(c.explanation?.frame).toMatchObject({ nearest_tree: a.tree_id, field: "model", trees_compared: 1 });
  });
});
