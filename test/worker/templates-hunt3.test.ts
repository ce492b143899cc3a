import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { scriptChatUpstream, type ChatScriptBody } from "./upstream-stub";

/** A number written with fullwidth digits (U+FF10..), as Japanese text often writes amounts. */
const fullwidth = (n: number) => [...String(n)].map((d) => String.fromCharCode(0xff10 + Number(d))).join("");
const FULLWIDTH = /[０-９]+/;
const yenOf = (text: string) => Number([...(FULLWIDTH.exec(text)?.[0] ?? "")].map((c) => String(c.charCodeAt(0) - 0xff10)).join(""));

/** The refund desk the test scripts: refunds up to 50000 yen, escalates larger ones; amounts in fullwidth digits. */
function desk(body: ChatScriptBody): string {
  const user = body.messages[1].content;
  const id = /R-\d+/.exec(user)?.[0] ?? "";
  const amount = FULLWIDTH.exec(user)?.[0] ?? "";
  return yenOf(user) <= 50000 ? `${id} に ${amount} 円を返金しました。` : `${id} の ${amount} 円はエスカレーションします。`;
}

let upstream = { asked: 0 };
beforeEach(() => {
  upstream = scriptChatUpstream(desk);
});
afterEach(() => vi.restoreAllMocks());

const refund = (model: string, amount: number, id: string) => ({
  model,
  messages: [
    { role: "system", content: "50000円までの返金は承認されます。" },
    { role: "user", content: `返金 ${fullwidth(amount)} 円 ${id}` },
  ],
});

async function send(model: string, amount: number, id: string) {
  const res = await chat(refund(model, amount, id));
  const body = (await res.json()) as OpenAI.ChatCompletion;
  return { cache: res.headers.get("muscle-mem-cache"), learned: res.headers.get("muscle-mem-template") !== null, content: body.choices[0].message.content };
}

describe("learned templates through the Worker: an amount in fullwidth digits is never a slot", () => {
  it("Should escalate ９９０００ yen from the model after refunds of ３０００, １２０００ and ２５０００ (typed an identifier, it had no range)", async () => {
    const model = uniqueModel("hunt3-fullwidth");
    await settled(async () => {
      for (const [amount, id] of [
        [3000, "R-1001"],
        [12000, "R-1002"],
        [25000, "R-1003"],
      ] as const)
        expect((await send(model, amount, id)).cache).toBe("miss");
    });
    await learningRan();
    expect(await settled(() => send(model, 99000, "R-1004"))).toEqual({
      cache: "miss",
      learned: false,
      content: "R-1004 の ９９０００ 円はエスカレーションします。",
    });
    expect(upstream.asked).toBe(4);
  });
});
