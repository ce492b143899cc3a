import type { StoredAnswer } from "../../core/answer";

/** The outcome of asking to generate the answer for one key. */
export type Claim = { role: "leader"; token: string } | { role: "follower"; answer: StoredAnswer } | { role: "alone"; reason: "leader-failed" | "timeout" };

/** What `join` answers at once: a claim, or `waiting` when another request leads (then call `follow`). */
export type Joined = Exclude<Claim, { role: "alone" }> | { role: "waiting" };

interface Flight {
  token: string;
  startedAt: number;
  waiters: Array<(claim: Claim) => void>;
}

/**
 * Single flight for one tree: the first claim of a key leads (goes to the
 * model); later claims of the same key wait for the leader's answer. A leader
 * that does not finish within `leaseMs` loses its lease, so a lost isolate
 * never blocks the others for long. Answers stay for `recentMs` so that a
 * request that missed D1 just before the leader recorded is still served.
 */
export class SingleFlight {
  private readonly flights = new Map<string, Flight>();
  private readonly recent = new Map<string, { answer: StoredAnswer; until: number }>();

  constructor(
    private readonly leaseMs: number,
    private readonly recentMs = 10_000,
  ) {}

  claim(key: string, now = Date.now()): Claim | Promise<Claim> {
    const joined = this.join(key, now);
    return joined.role === "waiting" ? this.follow(key, now) : joined;
  }

  /** Never waits: leads, is served a recent answer, or learns that another request leads. */
  join(key: string, now = Date.now()): Joined {
    const recent = this.recent.get(key);
    if (recent && recent.until > now) return { role: "follower", answer: recent.answer };
    const flight = this.flights.get(key);
    if (!flight || now - flight.startedAt > this.leaseMs) {
      const token = crypto.randomUUID();
      if (flight) this.settle(key, flight, { role: "alone", reason: "timeout" });
      this.flights.set(key, { token, startedAt: now, waiters: [] });
      return { role: "leader", token };
    }
    return { role: "waiting" };
  }

  /** Waits for the current leader of `key` (at most its lease); `alone` when there is none any more. */
  follow(key: string, now = Date.now()): Claim | Promise<Claim> {
    const recent = this.recent.get(key);
    if (recent && recent.until > now) return { role: "follower", answer: recent.answer };
    const flight = this.flights.get(key);
    if (!flight) return { role: "alone", reason: "leader-failed" };
    return new Promise<Claim>((resolve) => {
      flight.waiters.push(resolve);
      setTimeout(() => resolve({ role: "alone", reason: "timeout" }), Math.max(0, this.leaseMs - (now - flight.startedAt)));
    });
  }

  /**
   * A generation for `key` was recorded. Waiters of the leader's flight are
   * served its answer; `servable` is what the serving policy would now serve
   * from D1 (null when nothing), remembered for requests that raced the record.
   */
  complete(key: string, token: string | undefined, answer: StoredAnswer, servable: StoredAnswer | null, now = Date.now()): void {
    this.sweep(now);
    if (servable) this.recent.set(key, { answer: servable, until: now + this.recentMs });
    else this.recent.delete(key);
    const flight = this.flights.get(key);
    if (token !== undefined && flight?.token === token) this.settle(key, flight, { role: "follower", answer });
  }

  /** The leader failed (upstream error, truncated stream, abort): waiters go to the model themselves. */
  fail(key: string, token: string): void {
    const flight = this.flights.get(key);
    if (flight?.token === token) this.settle(key, flight, { role: "alone", reason: "leader-failed" });
  }

  /** Forgets recent answers, e.g. after a prune. */
  forget(): void {
    this.recent.clear();
  }

  private settle(key: string, flight: Flight, claim: Claim): void {
    this.flights.delete(key);
    for (const resolve of flight.waiters) resolve(claim);
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.recent) if (entry.until <= now) this.recent.delete(key);
  }
}
