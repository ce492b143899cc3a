import { describe, expect, it } from "vitest";
import { ChildlessMemory } from "../../src/engine/lookup/childless";

const BOUND = 1000;

describe("ChildlessMemory", () => {
  it("Should know a path through an answer its recording inserted, until the bound from when the record was sent", () => {
    const memory = new ChildlessMemory(BOUND);
    memory.recorded(["h1", "h2"], "a2", true, 100, 150);
    expect(memory.knownLeaf(["h1", "h2", "a2", "h4"], "t", false, 150)).toBe(3);
    expect(memory.knownLeaf(["h1", "h2", "a2", "h4"], "t", false, 100 + BOUND - 1)).toBe(3);
    expect(memory.knownLeaf(["h1", "h2", "a2", "h4"], "t", false, 100 + BOUND)).toBeNull();
  });

  it("Should not know an answer the recording's batch found already stored", () => {
    const memory = new ChildlessMemory(BOUND);
    memory.recorded(["h1"], "a1", false, 100, 100);
    expect(memory.knownLeaf(["h1", "a1", "h3"], "t", false, 100)).toBeNull();
  });

  it("Should forget every node of a later recording's path: each has a child now", () => {
    const memory = new ChildlessMemory(BOUND);
    memory.recorded(["h1"], "a1", true, 100, 100);
    memory.recorded(["h1", "a1", "h3"], "a3", true, 110, 110);
    expect(memory.knownLeaf(["h1", "a1", "h5"], "t", false, 120)).toBeNull();
    expect(memory.knownLeaf(["h1", "a1", "h3", "a3", "h5"], "t", false, 120)).toBe(4);
  });

  it("Should ask a route that serves templates for a template-free tree within the bound", () => {
    const memory = new ChildlessMemory(BOUND);
    memory.recorded(["h1"], "a1", true, 100, 100);
    expect(memory.knownLeaf(["h1", "a1", "h3"], "t", true, 100)).toBeNull();
    memory.noteNoTemplates("t", 90, 100);
    expect(memory.knownLeaf(["h1", "a1", "h3"], "t", true, 100)).toBe(2);
    expect(memory.knownLeaf(["h1", "a1", "h3"], "other", true, 100)).toBeNull();
    expect(memory.knownLeaf(["h1", "a1", "h3"], "t", true, 90 + BOUND)).toBeNull();
    memory.noteNoTemplates("t", 95, 100);
    memory.forgetTemplates("t");
    expect(memory.knownLeaf(["h1", "a1", "h3"], "t", true, 100)).toBeNull();
  });

  it("Should know nothing with a bound of 0, or after a clear", () => {
    const off = new ChildlessMemory(0);
    off.recorded(["h1"], "a1", true, 100, 100);
    expect(off.knownLeaf(["h1", "a1", "h3"], "t", false, 100)).toBeNull();
    const memory = new ChildlessMemory(BOUND);
    memory.recorded(["h1"], "a1", true, 100, 100);
    memory.clear();
    expect(memory.knownLeaf(["h1", "a1", "h3"], "t", false, 100)).toBeNull();
  });

  it("Should let one fast miss of a key be on its way at a time, until it ends or its time runs out", () => {
    const memory = new ChildlessMemory(BOUND);
    expect(memory.begin("k", 500, 100)).toBe(true);
    expect(memory.begin("k", 500, 200)).toBe(false);
    memory.end("k");
    expect(memory.begin("k", 500, 300)).toBe(true);
    expect(memory.begin("k", 500, 800)).toBe(true);
  });
});
