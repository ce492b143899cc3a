import { describe, expect, it } from "vitest";
import { Check, Engine } from "../../sdk/src/index.js";

describe("@engine.method (TC39 decorators)", () => {
  it("Should record a decorated method and replay it on the context", async () => {
    const engine = new Engine({ onWarning: () => {} });
    const clicks: string[] = [];
    class Client {
      constructor(readonly label: string) {}
      @engine.method({
        postCheck: new Check(
          function (this: Client) {
            return this.label;
          },
          (a, b) => a === b,
        ),
      })
      click(x: number, y: number): string {
        clicks.push(`${this.label}:${x},${y}`);
        return "ok";
      }
    }
    const client = new Client("main");
    engine
      .setAgent(() => {
        client.click(1, 2);
      })
      .setContext(client)
      .finalize();
    expect(client.click(0, 0)).toBe("ok"); // outside a run: plain call
    expect(await engine("click")).toBe(false);
    expect(await engine("click")).toBe(true);
    expect(clicks).toEqual(["main:0,0", "main:1,2", "main:1,2"]);
  });
});
