import { describe, expect, it } from "vitest";
import { Check, Engine, MemoryStore } from "../../sdk/src/index.js";

// The original README's "Putting it all together", in TypeScript.

interface T {
  name: string;
  time: number;
}

describe("putting it all together", () => {
  it("Should miss, then hit, then miss once the 1-second TTL check expires", async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store });

    // The test's clock: set, never waited for, so a busy machine cannot expire the TTL early.
    let now = 1_700_000_000_000;
    // our capture implementation, taking the tool's arguments and returning T
    const capture = (name: string): T => ({ name, time: now });
    // our compare implementation: the cache is valid if it was recorded within the last second
    const compare = (current: T, candidate: T): boolean => current.time - candidate.time <= 1000;

    const greeted: string[] = [];
    const hello = engine.function({ name: "hello", preCheck: new Check(capture, compare) }, (name: string) => {
      greeted.push(`hello ${name}`);
    });

    // pretend this is your agent
    let agentRuns = 0;
    const agent = (name: string) => {
      agentRuns++;
      for (let i = 0; i < 9; i++) hello(`${name} + ${i}`);
    };
    engine.setAgent(agent).finalize();

    // Run once: miss, the agent runs and is recorded
    expect(await engine("erik")).toBe(false);
    expect(agentRuns).toBe(1);

    // Run again: hit, replayed without the agent
    expect(await engine("erik")).toBe(true);
    expect(agentRuns).toBe(1);
    expect(greeted.slice(9)).toEqual(greeted.slice(0, 9));

    // Break the cache by moving past the TTL, then run again: miss
    now += 1100;
    expect(await engine("erik")).toBe(false);
    expect(agentRuns).toBe(2);

    // The fresh recording serves the next call; the hit stored nothing.
    expect(await engine("erik")).toBe(true);
    expect(store.size).toBe(2);
  });

  it("Should take tags and params as in the issue's API", async () => {
    const engine = new Engine();
    const typed: string[] = [];
    const type = engine.function({ name: "type" }, (text: string) => typed.push(text));
    engine
      .setAgent((_task, { params }) => {
        type("First name:");
        type(String(params.name));
      })
      .finalize();

    expect(await engine("fill the form with name: John", { tags: ["form"], params: { name: "John" } })).toBe(false);
    // One recording cannot tell a param from a literal equal to it by chance: a second value proves it.
    expect(await engine("fill the form with name: Jane", { tags: ["form"], params: { name: "Jane" } })).toBe(false);
    expect(await engine("fill the form with name: Joe", { tags: ["form"], params: { name: "Joe" } })).toBe(true);
    expect(typed).toEqual(["First name:", "John", "First name:", "Jane", "First name:", "Joe"]);
  });
});
