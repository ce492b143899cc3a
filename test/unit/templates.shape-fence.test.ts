import { describe, expect, it } from "vitest";
import { weigh } from "../../src/cache/templates/evidence";
import { ask, learnAll, served } from "./templates.serve.support";

/** A desk that approves whole amounts and sends fractional ones to review; the answer copies the amount. */
const SYSTEM = "Approve whole amounts; fractional amounts go to review.";
const approve = (amount: string) => ask(SYSTEM, `Pay ${amount}.`, Number.isInteger(Number(amount)) ? `Paid ${amount}.` : `Review ${amount}.`);

describe("a counter-example of a shape never seen is remembered", () => {
  it("Should not serve a shape the model answered otherwise, after another value of that shape confirmed the template", () => {
    const t = learnAll([approve("1500"), approve("2500"), approve("2000")]);
    // 1700.5 has a shape the template never saw: the model's other answer refutes nothing, but must not be forgotten.
    const counter = weigh(t!, approve("1700.5"));
    expect(counter.outcome).toBe("fenced"); // the learner stores only outcomes other than "unrelated"
    t!.state = counter.state;
    // 2100.0 is whole: the same answer, which confirms the shape 9.9.
    t!.state = weigh(t!, approve("2100.0")).state;
    expect(served(t, approve("1800.5"))).toBeNull();
    expect(served(t, approve("1800"))).toEqual(approve("1800").answer);
  });
});
