import { describe, expect, it } from "vitest";
import { weigh } from "../../src/cache/templates/evidence";
import { ask, learnAll, served } from "./templates.serve.support";

/** A transfer desk: the answer copies the amount and the balance, and decides on their order. */
const transfer = (amount: number, balance: number) =>
  ask(
    "Approve a transfer only when the amount is at most the balance.",
    `Transfer ${amount} from an account with balance ${balance}.`,
    `Transfer of ${amount} ${amount <= balance ? "approved" : "declined"} (balance ${balance}).`,
  );

describe("learned templates keep the order seen between two ranged slots", () => {
  const t = learnAll([transfer(100, 900), transfer(900, 1000), transfer(500, 600)]);

  it("Should not serve an amount above its balance when every amount seen was at most its balance, each inside its range", () => {
    expect(t).not.toBeNull();
    expect(served(t, transfer(850, 700))).toBeNull();
    expect(served(t, transfer(300, 700))).toEqual(transfer(300, 700).answer);
  });

  it("Should serve an order once a binding in that order confirmed the template", () => {
    const both = learnAll([transfer(100, 900), transfer(900, 1000), transfer(500, 600)]);
    const sameAnswer = ask(
      "Approve a transfer only when the amount is at most the balance.",
      "Transfer 800 from an account with balance 700.",
      "Transfer of 800 approved (balance 700).",
    );
    both!.state = weigh(both!, sameAnswer).state;
    expect(served(both, transfer(850, 700))).toEqual({ role: "assistant", content: "Transfer of 850 approved (balance 700)." });
  });

  it("Should serve nothing from a template learned before orders were kept, when it has two ranged slots of a type", () => {
    const { orders: _orders, ...old } = t!.state;
    expect(served({ ...t!, state: old }, transfer(300, 700))).toBeNull();
  });

  it("Should keep no order between slots of different types, or with a single ranged slot", () => {
    const delivery = (id: string, at: string, cents: number) =>
      ask("Confirm the delivery.", `Order ${id}, ${cents} cents, delivered ${at}.`, `Order ${id} (${cents} cents) delivered ${at}.`);
    const d = learnAll([delivery("A-1", "2024-03-05", 1500), delivery("B-2", "2024-03-09", 2500), delivery("C-3", "2024-03-07", 2000)]);
    expect(d!.state.orders).toEqual([]);
    expect(served(d, delivery("D-4", "2024-03-06", 1800))).toEqual(delivery("D-4", "2024-03-06", 1800).answer);
  });
});
