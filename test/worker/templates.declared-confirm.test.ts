import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { screenTurn } from "./screen-turn";
import { chat, eventually, generations, recorded, uniqueModel } from "./helpers";

const declare = (last: string, member: string) => ({ headers: { "muscle-mem-bindings": JSON.stringify({ last, member_id: member }) } });

async function ask(model: string, last: string, member: string): Promise<{ cache: string | null; template: string | null; call: string }> {
  const res = await chat(screenTurn(model, last, member), declare(last, member));
  const body = (await res.json()) as OpenAI.ChatCompletion;
  const call = body.choices[0].message.tool_calls?.[0];
  return {
    cache: res.headers.get("muscle-mem-cache"),
    template: res.headers.get("muscle-mem-template"),
    call: call?.type === "function" ? `${call.function.name} ${call.function.arguments}` : "",
  };
}

describe("a declared answer serves other values only after a second binding confirmed it", () => {
  it("Should not serve one customer's answer to another before a second binding confirmed it (a declared value the model decides on)", async () => {
    const model = uniqueModel("wf-screen-decl");
    expect(await ask(model, "Knuth", "M-1001")).toMatchObject({ cache: "miss", call: 'approve {"member_id":"M-1001","desk":"west"}' });
    await recorded(screenTurn(model, "Knuth", "M-1001"), declare("Knuth", "M-1001"));
    // The same customer again is an exact repeat of its own recording.
    expect(await ask(model, "Knuth", "M-1001")).toMatchObject({ cache: "hit", call: 'approve {"member_id":"M-1001","desk":"west"}' });
    // A VIP: the model fast-tracks; one binding's answer must not be served to it.
    expect(await ask(model, "Hopper", "M-2002")).toMatchObject({ cache: "miss", call: 'fast_track {"member_id":"M-2002","desk":"west"}' });
    // Once the second answer is recorded, the node holds two answers and even Knuth's own repeat goes to the model.
    await eventually(async () => {
      const res = await chat(screenTurn(model, "Knuth", "M-1001"), { headers: { ...declare("Knuth", "M-1001").headers, "cache-control": "only-if-cached" } });
      await res.arrayBuffer();
      return res.status === 504;
    });
    // The model answered this node two ways: it serves no new values at all.
    expect(await ask(model, "Wirth", "M-3003")).toMatchObject({ cache: "miss", call: 'approve {"member_id":"M-3003","desk":"west"}' });
    expect(await generations(model)).toBe(3);
  });

  it("Should serve new values once a second distinct binding got the same answer", async () => {
    const model = uniqueModel("wf-screen-decl");
    expect((await ask(model, "Knuth", "M-1001")).cache).toBe("miss");
    await recorded(screenTurn(model, "Knuth", "M-1001"), declare("Knuth", "M-1001"));
    expect((await ask(model, "Wirth", "M-3003")).cache).toBe("miss");
    await recorded(screenTurn(model, "Wirth", "M-3003"), declare("Wirth", "M-3003"));
    expect(await ask(model, "Dijkstra", "M-4004")).toMatchObject({ cache: "hit", template: "declared", call: 'approve {"member_id":"M-4004","desk":"west"}' });
    expect(await generations(model)).toBe(2);
  });
});
