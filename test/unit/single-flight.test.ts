import { describe, expect, it } from "vitest";
import { SingleFlight } from "../../src/store/objects/single-flight";
import { storedAnswer } from "../support/stored-answer";

const answer = storedAnswer;

describe("single flight", () => {
  it("Should let the first claim lead and serve its answer to the others", async () => {
    const flights = new SingleFlight(10_000);
    const leader = flights.claim("k");
    expect(leader).toMatchObject({ role: "leader" });
    const waiting = [flights.claim("k"), flights.claim("k")];
    flights.complete("k", (leader as { token: string }).token, answer("a"), answer("a"));
    expect(await Promise.all(waiting)).toEqual([
      { role: "follower", answer: answer("a") },
      { role: "follower", answer: answer("a") },
    ]);
  });

  it("Should send the waiters to the model when the leader fails", async () => {
    const flights = new SingleFlight(10_000);
    const leader = flights.claim("k") as { token: string };
    const waiting = flights.claim("k");
    flights.fail("k", leader.token);
    expect(await waiting).toEqual({ role: "alone", reason: "leader-failed" });
    expect(flights.claim("k")).toMatchObject({ role: "leader" });
  });

  it("Should give a lost leader's lease to the next claim after leaseMs", () => {
    const flights = new SingleFlight(1000);
    flights.claim("k", 0);
    expect(flights.claim("k", 2000)).toMatchObject({ role: "leader" });
  });

  it("Should remember only what the policy would serve, for requests that raced the record", () => {
    const flights = new SingleFlight(1000, 5000);
    const leader = flights.claim("k", 0) as { token: string };
    flights.complete("k", leader.token, answer("a"), null, 0);
    expect(flights.claim("k", 10)).toMatchObject({ role: "leader" });
    const other = flights.claim("j", 0) as { token: string };
    flights.complete("j", other.token, answer("b"), answer("b"), 0);
    expect(flights.claim("j", 10)).toEqual({ role: "follower", answer: answer("b") });
    expect(flights.claim("j", 6000)).toMatchObject({ role: "leader" });
    flights.forget();
  });

  it("Should ignore a stale token", async () => {
    const flights = new SingleFlight(10_000);
    flights.claim("k");
    const waiting = flights.claim("k");
    flights.fail("k", "not-the-token");
    flights.complete("k", "not-the-token", answer("x"), null);
    const raced = await Promise.race([waiting, new Promise((r) => setTimeout(() => r("still waiting"), 50))]);
    expect(raced).toBe("still waiting");
  });
});
