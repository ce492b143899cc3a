import { screenDesk } from "../../tools/eval-workflows/screen";

/**
 * The screening desk's second turn for one customer (wf-screen): the member was checked; the model now routes
 * (a VIP last name is fast-tracked). Used by the declared-answer tests whose binding is the last name.
 */
export const screenTurn = (model: string, last: string, member: string) => ({
  model,
  tools: screenDesk.tools,
  messages: [
    { role: "system", content: screenDesk.system },
    { role: "user", content: `Screening request from Ada ${last}: member ${member}, city Paris, ticket 200.` },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_chk", type: "function", function: { name: "check_member", arguments: JSON.stringify({ member_id: member }) } }],
    },
    { role: "tool", tool_call_id: "call_chk", content: JSON.stringify({ member_id: member, active: true }) },
  ],
});
