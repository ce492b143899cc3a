import { describe, expect, it } from "vitest";
import { Check, Engine, MemoryStore } from "../../sdk/src/index.js";
import { skillKey } from "../../sdk/src/steps.js";

// Issue 17, defect 4: a literal argument equal to a param's value by coincidence must not become the param.

function clicker() {
  const store = new MemoryStore();
  const engine = new Engine<{ qty: number }>({ store, onWarning: () => {} });
  const clicks: string[] = [];
  const click = engine.function({ name: "click" }, (x: number, y: number) => {
    clicks.push(`${x},${y}`);
  });
  let agentRuns = 0;
  // The agent always clicks at (20, 300): the 20 is a screen coordinate, not the quantity.
  engine
    .setAgent(() => {
      agentRuns++;
      click(20, 300);
    })
    .finalize();
  return { engine, store, clicks, agentRuns: () => agentRuns };
}

describe("Issue 17.4: params bound only where proven", () => {
  it("Should not replay a literal 20 as qty when qty was 20 by coincidence", async () => {
    const { engine, clicks, agentRuns } = clicker();
    expect(await engine("order", { tags: ["order"], params: { qty: 20 } })).toBe(false);
    expect(await engine("order", { tags: ["order"], params: { qty: 5 } })).toBe(false); // unproven: the agent decides
    expect(clicks).toEqual(["20,300", "20,300"]);
    expect(await engine("order", { tags: ["order"], params: { qty: 7 } })).toBe(true);
    expect(clicks.at(-1)).toBe("20,300");
    expect(agentRuns()).toBe(2);
  });

  it("Should replay a param once two recordings with different values prove the binding", async () => {
    const engine = new Engine<{ name: string }>({ onWarning: () => {} });
    const typed: string[] = [];
    const type = engine.function({ name: "type" }, (text: string) => {
      typed.push(text);
    });
    let agentRuns = 0;
    engine
      .setAgent((_task, { params }) => {
        agentRuns++;
        type("Name:");
        type(params.name);
      })
      .finalize();
    expect(await engine("form", { tags: ["form"], params: { name: "John" } })).toBe(false);
    expect(await engine("form", { tags: ["form"], params: { name: "John" } })).toBe(true); // same value: no binding needed
    expect(await engine("form", { tags: ["form"], params: { name: "Jane" } })).toBe(false);
    expect(await engine("form", { tags: ["form"], params: { name: "Joe" } })).toBe(true);
    expect(typed.slice(-2)).toEqual(["Name:", "Joe"]);
    expect(agentRuns).toBe(2);
  });

  it("Should store a step whose post-check failed with the arguments it was called with", async () => {
    const store = new MemoryStore();
    const engine = new Engine<{ name: string }>({ store, onWarning: () => {} });
    const screen = { after: "saved" };
    const type = engine.function(
      {
        name: "type",
        postCheck: new Check(
          () => screen.after,
          (a, b) => a === b,
        ),
      },
      (_text: string) => {},
    );
    engine
      .setAgent((_task, { params }) => {
        type(params.name);
      })
      .finalize();
    await engine("form", { tags: ["form"], params: { name: "John" } });
    await engine("form", { tags: ["form"], params: { name: "Jane" } }); // proves the binding
    screen.after = "error";
    expect(await engine.run("form", { tags: ["form"], params: { name: "Joe" } })).toMatchObject({ hit: false, replayed: 1, stored: true });
    const branch = store.dump().at(-1);
    expect(branch?.steps[0]).toMatchObject({ args: [{ value: "Joe", param: "name" }], post: "error" });
  });

  it("Should template the task key only at whole tokens, numbers included", () => {
    expect(skillKey("page 1 of 10", [], { id: "1" })).toEqual({ task: "page {{id}} of 10" });
    expect(skillKey("order 42 for bob", [], { id: 42, who: "bob" })).toEqual({ task: "order {{id}} for {{who}}" });
    expect(skillKey("greet name", [], { name: "name", other: "greet" })).toEqual({ task: "{{other}} {{name}}" });
  });
});
