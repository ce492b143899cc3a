import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { scriptChatUpstream, type ChatScriptBody } from "./upstream-stub";

const ALLOWED = ["downloads.example.com", "mirror.example.org", "cdn.example.net"];

/** The ops desk the test scripts: packages from the allow-list only, executables quarantined. */
function desk(body: ChatScriptBody): string {
  const [, ticket = "", url = ""] = /^(\S+): install https:\/\/(\S+)$/.exec(body.messages[1].content) ?? [];
  if (!ALLOWED.includes(url.split("/")[0])) return `${ticket}: ${url} is not on the allow-list.`;
  return url.endsWith(".exe") ? `${ticket}: quarantined ${url}.` : `${ticket}: scheduled ${url}.`;
}

let upstream = { asked: 0 };
beforeEach(() => {
  upstream = scriptChatUpstream(desk);
});
afterEach(() => vi.restoreAllMocks());

const install = (model: string, ticket: string, url: string) => ({
  model,
  messages: [
    { role: "system", content: "Packages come only from the allow-list; executables are quarantined." },
    { role: "user", content: `${ticket}: install https://${url}` },
  ],
});

async function send(model: string, ticket: string, url: string) {
  const res = await chat(install(model, ticket, url));
  const body = (await res.json()) as OpenAI.ChatCompletion;
  return { cache: res.headers.get("muscle-mem-cache"), learned: res.headers.get("muscle-mem-template") !== null, content: body.choices[0].message.content };
}

describe("learned templates through the Worker: the words inside a package URL are closed-class", () => {
  it("Should quarantine agent-2.5.1.exe from the model after installs of .deb, .rpm and .msi (the letters varied, `exe` as long as `deb`)", async () => {
    const model = uniqueModel("hunt4-exe");
    await settled(async () => {
      for (const [ticket, url] of [
        ["INC0010001", "downloads.example.com/pkgs/agent-2.5.1.deb"],
        ["INC0010002", "mirror.example.org/pkgs/agent-2.5.1.rpm"],
        ["INC0010003", "cdn.example.net/pkgs/agent-2.5.1.msi"],
      ] as const)
        expect((await send(model, ticket, url)).cache).toBe("miss");
    });
    await learningRan();
    // The template serves: a new ticket for a confirmed package.
    expect(await settled(() => send(model, "INC0010004", "cdn.example.net/pkgs/agent-2.5.1.msi"))).toEqual({
      cache: "hit",
      learned: true,
      content: "INC0010004: scheduled cdn.example.net/pkgs/agent-2.5.1.msi.",
    });
    expect(await settled(() => send(model, "INC0010005", "mirror.example.org/pkgs/agent-2.5.1.exe"))).toEqual({
      cache: "miss",
      learned: false,
      content: "INC0010005: quarantined mirror.example.org/pkgs/agent-2.5.1.exe.",
    });
    expect(await settled(() => send(model, "INC0010006", "mirror.badhost.org/pkgs/agent-2.5.1.deb"))).toEqual({
      cache: "miss",
      learned: false,
      content: "INC0010006: mirror.badhost.org/pkgs/agent-2.5.1.deb is not on the allow-list.",
    });
    expect(upstream.asked).toBe(5);
  });
});
