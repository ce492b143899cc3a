import { describe, expect, it } from "vitest";
import { api, learn, newKey, ok, onlyTree } from "./api-helpers";
import { chat, eventually, storeCost, uniqueModel } from "./helpers";

interface Explained {
  outcome: string;
  status: number;
  request_id: string;
  reason: string | null;
  error?: string | null;
  tree_id: string | null;
  explanation: {
    kind: string;
    depth: number;
    messages: number;
    tree_id: string;
    divergence: {
      index: number;
      parent: string;
      siblings: number;
      closest: { node: string } | null;
      field: string | null;
      diff: { before: string; incoming: string; recorded: string; after: string } | null;
    } | null;
    frame: { nearest_tree: string | null; field: string | null; trees_compared: number } | null;
  } | null;
}

const TOOLS = [
  {
    type: "function",
    function: { name: "refund", parameters: { type: "object", properties: { order: { type: "string" }, amount_cents: { type: "integer" } } } },
  },
];
const call = (amount: number) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id: `call_${amount}`, type: "function", function: { name: "refund", arguments: JSON.stringify({ order: "A-1", amount_cents: amount }) } }],
});
const conversation = (model: string, amount: number, status: string, extra: Record<string, unknown> = {}) => ({
  model,
  tools: TOOLS,
  ...extra,
  messages: [
    { role: "system", content: "You are the refund desk." },
    { role: "user", content: "Refund order A-1 please" },
    call(amount),
    { role: "tool", tool_call_id: `call_${amount}`, content: JSON.stringify({ ok: true, status }) },
  ],
});

/** Sends `body` with `x-request-id: id`; returns the response, its body read. */
async function send(body: unknown, key: string, id: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await chat(body, { key, headers: { "x-request-id": id, ...headers } });
  await res.arrayBuffer();
  return res;
}

/** The request's record once written (rows land with the counters' flush). */
async function explained(id: string, key: string): Promise<Explained> {
  let found: Explained | null = null;
  await eventually(async () => {
    const res = await api(`/requests/${encodeURIComponent(id)}`, { token: key });
    if (res.status !== 200) {
      await res.arrayBuffer();
      return false;
    }
    found = (await res.json<{ data: Explained }>()).data;
    return true;
  });
  if (!found) throw new Error("never written");
  return found;
}

describe("why it missed", () => {
  it("Should say new-tree, then new-branch with its depth, and explain the differing tool result after the response", async () => {
    const key = newKey();
    const model = uniqueModel("why");
    const first = await send(conversation(model, 1999, "delivered"), key, `why-first-${model}`);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    expect(first.headers.get("muscle-mem-miss")).toBe("new-tree");
    await learn(conversation(model, 1999, "delivered"), key).catch(() => undefined);
    await eventually(
      async () => (await send(conversation(model, 1999, "delivered"), key, `why-hit-${model}`, { "cache-control": "only-if-cached" })).status === 200,
    );

    const id = `why-tool-${model}`;
    const res = await send(conversation(model, 1999, "shipped"), key, id);
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(res.headers.get("muscle-mem-miss")).toBe("new-branch; depth=3");
    expect(res.headers.get("x-request-id")).toBe(id);

    const row = await explained(id, key);
    const tree = await onlyTree(key);
    expect(row).toMatchObject({ outcome: "miss", status: 200, request_id: id, tree_id: tree.id });
    expect(row.explanation).toMatchObject({ kind: "new-branch", depth: 3, messages: 4, tree_id: tree.id });
    expect(row.explanation?.divergence).toMatchObject({ index: 3, siblings: 1, field: "messages[3].content.status" });
    expect(row.explanation?.divergence?.diff).toEqual({ before: "", incoming: "shipp", recorded: "deliver", after: "ed" });
    expect(row.explanation?.divergence?.closest?.node).toMatch(/^[0-9a-f]{32}$/);

    const first_row = await explained(`why-first-${model}`, key);
    expect(first_row.explanation).toMatchObject({ kind: "new-tree", depth: 0, frame: { nearest_tree: null, field: null, trees_compared: 0 } });
  });

  it("Should name a differing tool-call argument, and the frame field of a new tree against the tenant's nearest tree", async () => {
    const key = newKey();
    const model = uniqueModel("why-args");
    await learn(conversation(model, 1999, "delivered"), key);
    const tree = await onlyTree(key);

    const args = await send(conversation(model, 2999, "delivered"), key, `why-args-${model}`);
    expect(args.headers.get("muscle-mem-miss")).toBe("new-branch; depth=2");
    const argsRow = await explained(`why-args-${model}`, key);
    expect(argsRow.explanation?.divergence).toMatchObject({ index: 2, field: "messages[2].tool_calls[0].function.arguments.amount_cents" });
    expect(argsRow.explanation?.divergence?.diff).toMatchObject({ incoming: "2", recorded: "1" });

    const warmer = await send(conversation(model, 1999, "delivered", { temperature: 0.7 }), key, `why-frame-${model}`);
    expect(warmer.headers.get("muscle-mem-miss")).toBe("new-tree");
    const frameRow = await explained(`why-frame-${model}`, key);
    expect(frameRow.explanation).toMatchObject({ kind: "new-tree", frame: { nearest_tree: tree.id, field: "temperature", trees_compared: 1 } });
  });

  it("Should show a request only to its own tenant, answer an only-if-cached 504 as an explained miss, and say why a bypass bypassed", async () => {
    const [key, other] = [newKey(), newKey()];
    const model = uniqueModel("why-own");
    await learn(conversation(model, 1999, "delivered"), key);
    const id = `why-504-${model}`;
    const res = await send(conversation(model, 1999, "refunded"), key, id, { "cache-control": "only-if-cached" });
    expect(res.status).toBe(504);
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(res.headers.get("muscle-mem-miss")).toBe("new-branch; depth=3");
    const row = await explained(id, key);
    expect(row).toMatchObject({ status: 504, outcome: "miss", explanation: { kind: "new-branch", depth: 3 } });
    const stranger = await api(`/requests/${id}`, { token: other });
    expect(stranger.status).toBe(404);
    await stranger.arrayBuffer();
    expect((await ok<{ data: Explained }>(api(`/requests/${id}`))).data.request_id).toBe(id);

    const bypass = await send(conversation(model, 1999, "delivered"), key, `why-bypass-${model}`, { "cache-control": "no-store" });
    expect(bypass.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(bypass.headers.get("muscle-mem-miss")).toBeNull();
    expect(await explained(`why-bypass-${model}`, key)).toMatchObject({ outcome: "bypass", reason: "no-store", explanation: null });
  });

  it("Should keep an upstream error's status and message with its row, and find it by the error filter and by its id", async () => {
    const key = newKey();
    const id = `why-error-${crypto.randomUUID().slice(0, 8)}`;
    const res = await send(conversation("error-502-why", 1999, "delivered"), key, id);
    expect(res.status).toBe(502);
    const row = await explained(id, key);
    expect(row).toMatchObject({ status: 502, error: "scripted 502" });
    const errors = await ok<{ data: Explained[] }>(api(`/requests?outcome=error&q=${id}`, { token: key }));
    expect(errors.data.map((r) => r.request_id)).toEqual([id]);
    const misses = await ok<{ data: Explained[] }>(api(`/requests?outcome=hit&q=${id}`, { token: key }));
    expect(misses.data).toEqual([]);
  });

  it("Should page over the whole retained log with next_cursor, each row once", async () => {
    const key = newKey();
    const model = uniqueModel("why-page");
    for (let i = 0; i < 5; i++) await send(conversation(model, 1000 + i, "delivered"), key, `why-page-${model}-${i}`);
    let rows: Explained[] = [];
    await eventually(async () => {
      rows = (await ok<{ data: Explained[] }>(api(`/requests?limit=200&q=why-page-${model}`, { token: key }))).data;
      return rows.length === 5;
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: Explained[]; next_cursor: string | null } = await ok(
        api(`/requests?limit=2&q=why-page-${model}${cursor ? `&cursor=${cursor}` : ""}`, { token: key }),
      );
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((r) => r.request_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(rows.map((r) => r.request_id));
    expect(new Set(seen).size).toBe(5);
  });

  it("Should add no store query before the response: a miss's server-timing counts what it counted without the explanation", async () => {
    const key = newKey();
    const model = uniqueModel("why-cost");
    await learn(conversation(model, 1999, "delivered"), key);
    const res = await send(conversation(model, 1999, "lost"), key, `why-cost-${model}`);
    expect(res.headers.get("muscle-mem-miss")).toBe("new-branch; depth=3");
    // A cold miss: the Worker's own read of the answers on the tree's primary (with the probe in the same
    // statement), then one call to the tree's object, which reads the live templates alone (nothing was recorded
    // at this key since the Worker's read, so not the answers again): two statements, as before the explanation
    // existed (three between cold hits leaving the object and the object trusting the Worker's read).
    expect(storeCost(res)).toEqual({ d1: 2, do: 1 });
  });
});
