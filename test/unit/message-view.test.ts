import { describe, expect, it } from "vitest";
import { messageView } from "../../dashboard/js/message-view.js";

describe("the dashboard's node panel reads the node API's provider-neutral view", () => {
  it("Should show the view's texts, calls, results and refusals as the Worker built them", () => {
    const view = {
      texts: ["Looking.", ""],
      calls: [{ name: "get_order", id: "call_0", args: '{"order_id":"A-1"}' }],
      results: [{ id: "call_1", text: "delivered" }],
      refusals: ["No."],
    };
    expect(messageView({ view })).toEqual({ ...view, texts: ["Looking."] });
  });

  it("Should read no API's message shape itself: a node without a view shows nothing, whatever its message", () => {
    const empty = { texts: [], calls: [], results: [], refusals: [] };
    const node = { view: undefined, message: { role: "assistant", content: "hello", tool_calls: [{ id: "c", function: { name: "f", arguments: "{}" } }] } };
    expect(messageView(node)).toEqual(empty);
    expect(messageView({ view: { texts: "not a list", calls: null } })).toEqual(empty);
  });
});
