import { describe, expect, it } from "vitest";
import { Check, Engine, type RunReport } from "../../sdk/src/index.js";
import { crop, draw, locate, similarity, type Button, type Pixels } from "../../examples/sdk-fake-screen.js";

// The original README's computer-use example (examples/cua.py), with a fake
// screen instead of a real one, and a pixel-crop pre-check instead of CLIP.

const LAYOUT: Button[] = ["A", "B", "C", "D", "E", "F"].map((label, i) => ({ label, x: 10 + i * 14, y: 20 }));
const MOVED_B_E = LAYOUT.map((b) => (b.label === "B" || b.label === "E" ? { ...b, y: 45 } : b));

function setup() {
  const engine = new Engine({ onWarning: () => {} });

  const sameRegion = new Check(
    function (this: Screen, x: number, y: number): Pixels {
      return crop(this.pixels, x, y);
    },
    (current, candidate) => similarity(current, candidate),
    { threshold: 0.95 },
  );

  class Screen {
    pixels: Pixels = draw(LAYOUT);
    readonly clicks: string[] = [];

    show(buttons: Button[]): void {
      this.pixels = draw(buttons);
    }

    @engine.method({ preCheck: sameRegion })
    click(x: number, y: number): string {
      this.clicks.push(`${x},${y}`);
      return `clicked (${x}, ${y})`;
    }
  }

  const screen = new Screen();
  const model = { calls: 0 };
  // A pretend computer-use agent: one "model call" per click; after a partial replay it starts over.
  const agent = (task: string) => {
    const labels = task.replace(/^click /, "").split(", ");
    for (const label of labels) {
      model.calls++;
      const at = locate(screen.pixels, label);
      if (!at) throw new Error(`no ${label} on screen`);
      screen.click(at.x, at.y);
    }
  };
  engine.setAgent(agent).setContext(screen).finalize();
  return { engine, screen, model };
}

const TASK = "click A, B, C, D, E, F";

describe("computer use with a pixel-crop pre-check", () => {
  it("Should miss, hit, branch after the moved button, then hit on both layouts", async () => {
    const { engine, screen, model } = setup();

    const first = await engine.run(TASK);
    expect(first).toMatchObject({ hit: false, replayed: 0, recorded: 6, stored: true });
    expect(model.calls).toBe(6);

    const second = await engine.run(TASK);
    expect(second).toMatchObject({ hit: true, replayed: 6, stored: false });
    expect(model.calls).toBe(6);
    expect(screen.clicks.slice(6)).toEqual(screen.clicks.slice(0, 6));

    // B and E move: A replays, B's crop no longer matches, the agent takes over after A.
    screen.show(MOVED_B_E);
    screen.clicks.length = 0;
    const third: RunReport = await engine.run(TASK);
    expect(third).toMatchObject({ hit: false, replayed: 1, recorded: 5, stored: true, branchOf: { at: 1 } });
    expect(model.calls).toBe(12);
    expect(screen.clicks).toEqual(["10,20", "24,45", "38,20", "52,20", "66,45", "80,20"]); // A once, never twice

    expect(await engine(TASK)).toBe(true);
    screen.show(LAYOUT);
    expect(await engine(TASK)).toBe(true);
    expect(model.calls).toBe(12);
  });

  it("Should score a crop against the threshold rather than as pass/fail", () => {
    const a = crop(draw(LAYOUT), 10, 20);
    const blank = crop(draw([]), 10, 20);
    expect(similarity(a, a)).toBe(1);
    const score = similarity(a, blank);
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThan(0.95);
  });
});
