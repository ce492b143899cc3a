import type { WranglerDev } from "../test/support/wrangler-dev";
import { uniqueMiss, type Body } from "./bodies";
import { growTree } from "./grow";
import { allHits, chatSpec, FLOOR, HEADERS, log, prime } from "./http";
import { interleaved } from "./load";
import { burst, ttfbProbe } from "./probes";
import { triple, type Row } from "./table";

export interface CoreContext {
  dev: WranglerDev;
  /** The snapshot's wrangler.toml, for direct SQL. */
  config: string;
  /** The scripted upstream and its generation counter. */
  model: { url: string; generations: () => number };
  /** Distinct recorded requests that the hit rows cycle. */
  hitBodies: Body[];
  /** The 2- and 100-message conversations of one frame. */
  short: Body;
  long: Body;
  load: { seconds: number; rounds: number; connections: number };
  /** The big tree's node count. */
  nodes: number;
  /** A last-message mark that makes the scripted upstream take 500 ms. */
  slowMark: string;
}

/** The hit, tree-size, conversation-length, TTFB and single-flight rows (docs/performance.md). */
export async function coreRows(ctx: CoreContext): Promise<{ rows: Row[]; results: Record<string, unknown> }> {
  const { dev, hitBodies, short, long, load } = ctx;
  const rows: Row[] = [];
  const sizes = hitBodies.map((b) => JSON.stringify(b).length).sort((a, b) => a - b);
  log(`priming ${hitBodies.length} bodies (${sizes[0]}-${sizes.at(-1)} bytes) and the 2/100-message pair`);
  await prime(dev.url, [...hitBodies, short, long]);
  const [{ tree }] = await dev.sql("SELECT tree_id AS tree FROM nodes GROUP BY tree_id ORDER BY COUNT(*) DESC LIMIT 1");
  const smallNodes = await growTree(dev, ctx.config, String(tree), 1000);
  log(`nodes in D1: ${smallNodes}`);

  const hitSpec = chatSpec("hit", hitBodies);
  // Throughput under concurrency, latency one request at a time: with 10
  // connections the p50 is mostly queueing (connections / throughput), so the
  // latency rows measure service time with a single connection.
  const serial = { ...load, connections: 1 };
  log("floor vs hit throughput (1k nodes)");
  const base = await interleaved(dev.url, [FLOOR, hitSpec], load);
  allHits("hit", base.hit);
  log("floor vs hit latency (1k nodes)");
  const baseLat = await interleaved(dev.url, [FLOOR, hitSpec], serial);
  allHits("hit", baseLat.hit);
  log("2 vs 100 messages");
  const convo = await interleaved(dev.url, [chatSpec("2 messages", [short]), chatSpec("100 messages", [long])], serial);
  allHits("2 messages", convo["2 messages"]);
  allHits("100 messages", convo["100 messages"]);

  log("streamed miss TTFB");
  const ttfbBase = hitBodies[0];
  const ttfb = await ttfbProbe(dev.url, ctx.model.url, (i) => uniqueMiss(ttfbBase, `ttfb ${i} ${Date.now()}`), HEADERS, 40);

  log("single flight");
  const before = ctx.model.generations();
  const flight = await burst(dev.url, uniqueMiss(ttfbBase, `${ctx.slowMark} ${Date.now()}`), HEADERS, 50);
  const generations = ctx.model.generations() - before;

  log(`growing the tree to ${ctx.nodes} nodes`);
  const bigNodes = await growTree(dev, ctx.config, String(tree), ctx.nodes);
  log(`nodes in D1: ${bigNodes}`);
  const big = await interleaved(dev.url, [FLOOR, hitSpec], serial);
  allHits("hit at 100k", big.hit);

  rows.push({
    row: "hit throughput / floor throughput",
    target: "≥ 0.7",
    value: (base.hit.rps / base.floor.rps).toFixed(2),
    met: base.hit.rps / base.floor.rps >= 0.7,
    detail: `${load.connections} connections. ${triple("floor", base.floor)}; ${triple("hit", base.hit)}`,
  });
  rows.push({
    row: "hit p50 − floor p50",
    target: "≤ 1 ms",
    value: `${(baseLat.hit.p50 - baseLat.floor.p50).toFixed(2)} ms`,
    met: baseLat.hit.p50 - baseLat.floor.p50 <= 1,
    detail: `1 connection. ${triple("floor", baseLat.floor)}; ${triple("hit", baseLat.hit)}`,
  });
  rows.push({
    row: `hit p50 at ${bigNodes} nodes / at ${smallNodes} nodes`,
    target: "≤ 1.2",
    value: (big.hit.p50 / baseLat.hit.p50).toFixed(2),
    met: big.hit.p50 / baseLat.hit.p50 <= 1.2,
    detail: `1 connection. ${triple("small", baseLat.hit)} (floor ${baseLat.floor.p50.toFixed(2)} ms); ${triple("big", big.hit)} (floor ${big.floor.p50.toFixed(2)} ms)`,
  });
  const c2 = convo["2 messages"];
  const c100 = convo["100 messages"];
  rows.push({
    row: "hit p50, 100-message / 2-message conversation",
    target: "≤ 1.5",
    value: (c100.p50 / c2.p50).toFixed(2),
    met: c100.p50 / c2.p50 <= 1.5,
    detail: `1 connection. ${triple(`2 msgs (${JSON.stringify(short).length} B)`, c2)}; ${triple(`100 msgs (${JSON.stringify(long).length} B)`, c100)}`,
  });
  rows.push({
    row: "streamed miss TTFB, proxy − direct (p50)",
    target: "≤ 2 ms",
    value: `${(ttfb.proxy.p50 - ttfb.direct.p50).toFixed(2)} ms`,
    met: ttfb.proxy.p50 - ttfb.direct.p50 <= 2,
    detail: `proxy: ${ttfb.proxy.p50.toFixed(2)} / ${ttfb.proxy.p99.toFixed(2)} ms; direct: ${ttfb.direct.p50.toFixed(2)} / ${ttfb.direct.p99.toFixed(2)} ms (${ttfb.proxy.samples} sequential samples each, outcomes ${JSON.stringify(ttfb.proxy.outcomes)})`,
  });
  rows.push({
    row: "streamed TTFB, the same Worker relaying without the cache (no-store), right after each miss − direct (p50): not a floor, the miss's background work lands on it (see --only floors for the bare relay)",
    target: "report",
    value: `${(ttfb.relay.p50 - ttfb.direct.p50).toFixed(2)} ms`,
    met: null,
    detail: `relay: ${ttfb.relay.p50.toFixed(2)} / ${ttfb.relay.p99.toFixed(2)} ms (every sample a bypass)`,
  });
  rows.push({
    row: "streamed miss: the Worker's time before it forwards (server-timing parse + lookup + claim, p50)",
    target: "report",
    value: `${ttfb.beforeForward.p50.toFixed(2)} ms`,
    met: null,
    detail: `p99 ${ttfb.beforeForward.p99.toFixed(2)} ms: one D1 read, the template presence memo, the single-flight join in the tree's Durable Object (server-timing has whole milliseconds)`,
  });
  rows.push({
    row: "single flight: 50 concurrent identical misses → upstream generations",
    target: "1",
    value: String(generations),
    met: generations === 1,
    detail: `outcomes ${JSON.stringify(flight.outcomes)}, ${flight.followers} followers, ${flight.wallMs.toFixed(0)} ms wall (upstream takes 500 ms)`,
  });
  const results = {
    base,
    baseLat,
    convo,
    ttfb,
    flight: { ...flight, generations },
    big,
    nodes: { small: smallNodes, big: bigNodes },
    hitBodyBytes: { min: sizes[0], max: sizes.at(-1) },
  };
  return { rows, results };
}
