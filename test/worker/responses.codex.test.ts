import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import codex from "../fixtures/agents/codex.request.json";
import { eventually } from "./helpers";
import { eventsOf } from "./responses.support";
import { scriptedResponses } from "../support/responses-upstream";

type Item = Record<string, unknown>;
type Body = Record<string, unknown> & { input: Item[]; tools: Item[] };

const PATCH = "*** Begin Patch\n*** Update File: desk.py\n@@\n-refunded = False\n+refunded = True\n*** End Patch\n";

/** The model's answer: a reasoning item and an apply_patch call, then, once the patch result is back, a message. */
function answerTo(body: Body, n: number): Item[] {
  const last = body.input[body.input.length - 1];
  if (last.type === "custom_tool_call_output")
    return [
      {
        id: "msg_up2",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Refunded A-1.", annotations: [], logprobs: [] }],
      },
    ];
  return [
    { id: "rs_up1", type: "reasoning", summary: [], encrypted_content: "gAAAA-sealed" },
    { id: "ctc_up1", type: "custom_tool_call", status: "completed", call_id: `call_up${n}`, name: "apply_patch", input: PATCH },
  ];
}

const upstream = scriptedResponses<Body>(answerTo, (body, n) => ({ id: `resp_up${n}`, client_metadata: body.client_metadata }));

/** Codex's request for one run (`_run1`/`_run2`: the ids and timestamp a new run changes), with `patch` over the body. */
function send(key: string, run: "_run1" | "_run2", patch: Partial<Body> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const values = codex[run];
  const body = { ...(codex.body as unknown as Body), prompt_cache_key: values.prompt_cache_key, client_metadata: values.client_metadata, ...patch };
  return exports.default.fetch(
    new Request("http://mm.test/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...codex._headers, ...values.headers, ...headers },
      body: JSON.stringify(body),
    }),
  );
}

async function recorded(key: string, patch: Partial<Body>): Promise<void> {
  await eventually(async () => {
    const res = await send(key, "_run1", patch, { "cache-control": "only-if-cached" });
    await res.arrayBuffer();
    return res.status === 200;
  });
}

describe("Codex's request shape (test/fixtures/agents/codex.request.json)", () => {
  it("Should hit on a second run whose client_metadata and prompt_cache_key differ, and replay the custom tool call as recorded", async () => {
    const key = `sk-codex-${crypto.randomUUID().slice(0, 8)}`;
    const first = await send(key, "_run1");
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.text();
    await recorded(key, {});
    const second = await send(key, "_run2");
    expect(second.headers.get("muscle-mem-cache")).toBe("hit");
    const events = eventsOf(await second.text());
    const completed = events.find((e) => e.type === "response.completed")?.response as Item;
    const output = completed.output as Item[];
    expect(output.map((i) => i.type)).toEqual(["reasoning", "custom_tool_call"]);
    expect(output[1]).toMatchObject({ type: "custom_tool_call", name: "apply_patch", input: PATCH, status: "completed" });
    expect(events.map((e) => e.type)).toContain("response.custom_tool_call_input.done");
    // The hit echoes this run's telemetry, never the recording's.
    expect(completed.client_metadata).toEqual(codex._run2.client_metadata);
    expect(completed.prompt_cache_key).toBe(codex._run2.prompt_cache_key);
    expect(upstream.asked).toHaveLength(1);

    // Turn 2: the served call and its output sent back are keyed; a repeat of turn 2 hits too.
    const turn2 = { input: [...(codex.body.input as Item[]), ...output, { type: "custom_tool_call_output", call_id: output[1].call_id, output: "Done!" }] };
    const miss = await send(key, "_run1", turn2);
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await miss.text();
    await recorded(key, turn2);
    const hit = await send(key, "_run2", turn2);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    await hit.text();
    expect(upstream.asked).toHaveLength(2);
  });

  it("Should key the additional_tools item, the namespace and custom tools: another tool list is another path", async () => {
    const key = `sk-codex-${crypto.randomUUID().slice(0, 8)}`;
    await (await send(key, "_run1")).text();
    await recorded(key, {});
    const input = (codex.body.input as Item[]).map((item) =>
      item.type === "additional_tools" ? { ...item, tools: (item.tools as Item[]).slice(0, 1) } : item,
    );
    const fewer = await send(key, "_run2", { input }, { "cache-control": "only-if-cached" });
    expect(fewer.status).toBe(504);
    const tools = (codex.body.tools as Item[]).map((tool) => (tool.type === "custom" ? { ...tool, description: "Edit files." } : tool));
    expect((await send(key, "_run2", { tools }, { "cache-control": "only-if-cached" })).status).toBe(504);
  });

  it("Should still pass web_search through, in tools, in a namespace or in additional_tools", async () => {
    const key = `sk-codex-${crypto.randomUUID().slice(0, 8)}`;
    const search = { type: "web_search" };
    const withTool = await send(key, "_run1", { tools: [...(codex.body.tools as Item[]), search] });
    expect(withTool.headers.get("muscle-mem-cache")).toBe("bypass");
    await withTool.text();
    const input = (codex.body.input as Item[]).map((item) =>
      item.type === "additional_tools" ? { ...item, tools: [...(item.tools as Item[]), search] } : item,
    );
    const added = await send(key, "_run1", { input });
    expect(added.headers.get("muscle-mem-cache")).toBe("bypass");
    await added.text();
    const nested = (codex.body.tools as Item[]).map((tool) => (tool.type === "namespace" ? { ...tool, tools: [...(tool.tools as Item[]), search] } : tool));
    const inside = await send(key, "_run1", { tools: nested });
    expect(inside.headers.get("muscle-mem-cache")).toBe("bypass");
    await inside.text();
  });
});
