import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { KEYS_PER_STATEMENT, readAnswers, readAnswersAt } from "../../src/store/tree/answers";
import { recordedPath } from "./refresh-support";

describe("readAnswersAt: the answers at many paths in one D1 call", () => {
  it("Should read each key's answers as the single lookup does, [] where there are none, across several statements", async () => {
    const [a, b] = [await recordedPath("answers-at-a"), await recordedPath("answers-at-b")];
    const absent = Array.from({ length: KEYS_PER_STATEMENT + 5 }, () => crypto.randomUUID().replaceAll("-", ""));
    // `b` lands in the second statement, after more than a statement's worth of keys.
    const keys = [a.parent, ...absent, b.parent];
    const read = await readAnswersAt(env.DB, keys);
    expect([...read.keys()]).toEqual(keys);
    expect(read.get(a.parent)).toEqual(await readAnswers(env.DB, a.parent));
    expect(read.get(b.parent)).toEqual(await readAnswers(env.DB, b.parent));
    expect(read.get(a.parent)!.map((x) => x.hash)).toEqual(a.answers.map((x) => x.hash));
    for (const key of absent) expect(read.get(key)).toEqual([]);
  });

  it("Should leave out a node with no observation left, as the single lookup does", async () => {
    const path = await recordedPath("answers-at-retracted");
    await env.DB.prepare("UPDATE nodes SET observations = 0 WHERE parent = ?").bind(path.parent).run();
    expect((await readAnswersAt(env.DB, [path.parent])).get(path.parent)).toEqual([]);
    expect(await readAnswers(env.DB, path.parent)).toEqual([]);
  });

  it("Should make no query for no keys", async () => {
    expect((await readAnswersAt(env.DB, [])).size).toBe(0);
  });
});
