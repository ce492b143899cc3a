import { describe, expect, it } from "vitest";
import { api, learn, newKey, ok, onlyTree } from "./api-helpers";
import { chat, eventually, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { REFUND_TOOLS } from "../../tools/refund-desk";

const ask = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });

interface Recorded {
  outcome: string;
  explanation: { kind: string; template: string | null } | null;
}

/** The request's record once written (rows land with the counters' flush). */
async function recordOf(id: string, key: string): Promise<Recorded> {
  let found: Recorded | null = null;
  await eventually(async () => {
    const res = await api(`/requests/${encodeURIComponent(id)}`, { token: key });
    if (res.status !== 200) {
      await res.arrayBuffer();
      return false;
    }
    found = (await res.json<{ data: Recorded }>()).data;
    return found.explanation !== null;
  });
  if (!found) throw new Error("never written");
  return found;
}

/** A learned template's refusal reaches the user: in `muscle-mem-template-miss` and in `GET /api/requests/:id`. */
describe("why a learned template did not serve, end to end", () => {
  it("Should name the slot, the request's level and the rule in the header and the request's record (A-5 after A-1, A-4, A-2)", async () => {
    const key = newKey();
    const model = uniqueModel("reasons");
    // settled: every recording has reached the tree's learner; learningRan: its queued learning ran now.
    await settled(async () => {
      for (const order of ["A-1", "A-4", "A-2"]) await learn(ask(model, order), key);
    });
    await learningRan();
    const tree = await onlyTree(key);
    await eventually(async () => {
      const page = await ok<{ data: Array<{ not_serving: string | null }> }>(api(`/trees/${tree.id}/templates`, { token: key }));
      return page.data.some((t) => t.not_serving === null);
    }, 20_000);
    // Inside the levels confirmed, the template serves; above them, the model may decide otherwise.
    const inside = await chat(ask(model, "A-3"), { key });
    await inside.arrayBuffer();
    expect(inside.headers.get("muscle-mem-cache")).toBe("hit");
    expect(inside.headers.get("muscle-mem-template")).not.toBeNull();
    const id = `reasons-${model}`;
    const above = await chat(ask(model, "A-5"), { key, headers: { "x-request-id": id } });
    await above.arrayBuffer();
    expect(above.headers.get("muscle-mem-cache")).toBe("miss");
    const reason = above.headers.get("muscle-mem-template-miss");
    expect(reason).toMatch(/^slot \d+ \(identifier `A-5`\): level 5 is above every confirmed level of `A`$/);
    const record = await recordOf(id, key);
    expect(record.outcome).toBe("miss");
    expect(record.explanation?.template).toBe(reason);
  });
});
