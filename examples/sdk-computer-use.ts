/**
 * A computer-use agent under the muscle-mem SDK, on a fake screen. The click
 * tool is a decorated method whose pre-check compares the pixels around the
 * click with the recorded ones (a similarity score against a threshold).
 *
 *   npx tsx examples/sdk-computer-use.ts
 */
import { Check, Engine } from "../sdk/src/index.js";
import { crop, draw, locate, similarity, type Button, type Pixels } from "./sdk-fake-screen.js";

const engine = new Engine();

const sameRegion = new Check(
  function (this: Screen, x: number, y: number): Pixels {
    return crop(this.pixels, x, y);
  },
  (current, candidate) => similarity(current, candidate),
  { threshold: 0.95 },
);

class Screen {
  pixels: Pixels = [];

  show(buttons: Button[]): void {
    this.pixels = draw(buttons);
  }

  @engine.method({ preCheck: sameRegion })
  click(x: number, y: number): string {
    console.log(`  click (${x}, ${y})`);
    return `clicked (${x}, ${y})`;
  }
}

const screen = new Screen();
let modelCalls = 0;

// A pretend computer-use model: looks at the screen once per click. After a
// partial replay it starts over like any agent; its clicks that repeat the
// replayed ones are answered from the replay instead of clicking twice.
function agent(task: string): void {
  const labels = task.replace(/^click /, "").split(", ");
  for (const label of labels) {
    modelCalls++;
    const at = locate(screen.pixels, label);
    if (!at) throw new Error(`${label} is not on screen`);
    screen.click(at.x, at.y);
  }
}

engine.setAgent(agent).setContext(screen).finalize();

const layout: Button[] = ["A", "B", "C", "D", "E", "F"].map((label, i) => ({ label, x: 10 + i * 14, y: 20 }));
const moved = layout.map((b) => (b.label === "B" || b.label === "E" ? { ...b, y: 45 } : b));
const task = "click A, B, C, D, E, F";

async function step(title: string): Promise<void> {
  console.log(title);
  const report = await engine.run(task);
  console.log(`  hit: ${report.hit}, replayed: ${report.replayed}, by the agent: ${report.recorded}, model calls so far: ${modelCalls}`);
}

screen.show(layout);
await step("first run: expect a miss");
await step("second run: expect a hit, no model calls");
screen.show(moved);
await step("B and E moved: A replays, then the agent continues (a branch)");
await step("same screen again: expect a hit from the branch");
screen.show(layout);
await step("original screen: expect a hit from the first recording");
