import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ask, eventually, freshKey, useClientsWorker } from "./clients-worker";

/**
 * A streamed leader whose openai client aborts (AbortController) while identical requests wait on its single
 * flight, over HTTP under `wrangler dev` (docs/reliability.md, "Under real traffic, hunted"): there, the Worker
 * learns of the abort only at its next write to the gone client. Whether each follower joined the flight
 * before the abort or led its own is not controlled here, so the assertions hold either way: every follower
 * gets the model's whole answer, no request hangs, the cut answer is never stored.
 */
const worker = useClientsWorker((url) => ({ UPSTREAM_BASE_URL: url }));
const { client, callsTo } = worker;

async function read(openai: OpenAI, body: OpenAI.ChatCompletionCreateParamsStreaming): Promise<{ outcome: string | null; text: string }> {
  const { data, response } = await openai.chat.completions.create(body).withResponse();
  let text = "";
  for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? "";
  return { outcome: response.headers.get("muscle-mem-cache"), text };
}

describe("a streamed leader aborted with followers waiting, through wrangler dev", () => {
  it("Should give every follower the whole answer, store nothing cut, and serve the whole answer after", { timeout: 60_000 }, async () => {
    const key = freshKey();
    const body = { model: "slow-race-abort", messages: ask("stream slowly to all of us"), stream: true as const };
    const controller = new AbortController();
    const stream = await client(key).chat.completions.create(body, { signal: controller.signal });
    const followers: Array<Promise<{ outcome: string | null; text: string }>> = [];
    let first = "";
    for await (const chunk of stream) {
      first += chunk.choices[0]?.delta.content ?? "";
      if (first && followers.length === 0) {
        // The leader's first chunk is here; the rest is held at the model. Three identical requests now.
        for (let i = 0; i < 3; i++) followers.push(read(client(key), body));
        controller.abort();
      }
    }
    expect(controller.signal.aborted).toBe(true);
    worker.upstream.release("slow-race-abort");
    const answers = await Promise.all(followers);
    const whole = answers[0].text;
    expect(whole.startsWith(first)).toBe(true);
    expect(whole).toContain("Echo: stream slowly to all of us");
    for (const a of answers) {
      expect(a.text).toBe(whole);
      expect(["miss", "hit"]).toContain(a.outcome);
    }
    await eventually(() => callsTo("slow-race-abort")[0]?.end === "cancelled", "the Worker to cancel the leader's upstream stream");
    const next = await read(client(key), body);
    expect(next).toEqual({ outcome: "hit", text: whole });
    // The leader's call was cancelled; every other call reached the model and answered whole.
    const ends = callsTo("slow-race-abort").map((c) => c.end);
    expect(ends[0]).toBe("cancelled");
    expect(ends.slice(1).every((e) => e === "answered")).toBe(true);
  });
});
