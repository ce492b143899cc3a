/** The Markdown of docs/capacity.md's model (npm run capacity), line for line: test/e2e/capacity.e2e.test.ts compares them. */
import { check, inputsOf, model, type MeasuredCounts, type Platform } from "./capacity-model";

const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2));
const usd = (n: number) => `$${Math.round(n).toLocaleString("en-US")}`;
const perMonth = (perSecond: number) => `${fmt((perSecond * 30 * 86_400) / 1e9)} B`;

export function report(counts: MeasuredCounts, p: Platform): string {
  const m = model(counts, p);
  const x = inputsOf(counts, p);
  const a = p.assumptions;
  const c = a.counters;
  const stand = "platform.json `unmeasured`: not in measured.json yet";
  type Row = { d1: number; do: number; colo: number; r: number; w: number; measured: boolean; responses: number };
  const row = (name: string, k: Row, colo = true) =>
    `| ${name} | ${fmt(k.d1)} / ${fmt(k.do)} / ${colo ? fmt(k.colo) : "-"} | ${fmt(k.r)} / ${fmt(k.w)} | ${k.responses ? `${k.responses} responses` : "none observed"}${k.measured ? "" : `; rows: ${stand}`} |`;
  const r = x.recording;
  const calls = r.byCall
    ? Object.entries(r.byCall)
        .map(([k, v]) => `${k} ${fmt(v.d1QueriesPerCall)} q, ${fmt(v.rowsReadPerCall ?? 0)} r / ${fmt(v.rowsWrittenPerCall ?? 0)} w a call`)
        .join("; ")
    : "";
  const tally = r.tally
    ? `| ${fmt(r.tally.d1QueriesPerFlush)} / - / - | ${fmt(r.tally.rowsReadPerFlush)} / ${fmt(r.tally.rowsWrittenPerFlush)} per write | ${r.tally.flushes} writes in the run (its TALLY_FLUSH_MS: 2 s); shown, not fed in: the model prices the counters per row (\`billedRows\`) |`
    : "| - | - | not in measured.json yet |";
  const b = p.billedRows;
  const lines = [
    `Per request, measured ${counts.date} (bench/capacity/measured.json): store calls before the response (\`server-timing\` d1, do, colo) and the rows D1 billed for them (\`d1rows\`, D1's own meta: the Worker's queries and those the tree's object made for the request); after the response, the objects' \`store_work\` lines:`,
    "",
    "| request | D1 queries / DO calls / Cache API reads | D1 rows read / written | seen |",
    "| --- | --- | --- | --- |",
    row("hit from isolate memory (warm)", x.warm),
    row("hit from the colo's Cache API", x.colo),
    row("hit from D1 (cold)", x.cold),
    row("learned-template hit", x.templateHit),
    row("miss, before it forwards", x.miss, false),
    row("miss in a tree with live templates, before it forwards", x.templateMiss),
    `| recording, after the response (the tree's writer and learner) | ${fmt(r.d1)} / ${fmt(r.do)} / - | ${fmt(r.r)} / ${fmt(r.w)} per miss | ${r.misses ? `${r.misses} misses${r.measured ? "" : `; rows: ${stand}`}` : stand} |`,
    `| the Worker's own D1 work after a miss's response (its explanation, a key's renewal) | ${fmt(r.after.d1QueriesPerMiss)} / - / - | ${fmt(r.after.rowsReadPerMiss)} / ${fmt(r.after.rowsWrittenPerMiss)} per miss | ${r.misses} misses |`,
    `| a tree's HitTally write (its counters, the recent-requests rows and their trims) ${tally}`,
    "",
    calls ? `By call: ${calls}.` : "",
    "",
    `| quantity (${fmt(p.workload.requestsPerSecond)} req/s, ${p.workload.hitRate} hit rate) | per second | per month |`,
    "| --- | --- | --- |",
    `| hits / misses | ${fmt(m.hits)} / ${fmt(m.misses)} | |`,
    `| D1 rows written: hits before the response (${fmt(m.hit("w"))} a hit) | ${fmt(m.hits * m.hit("w"))} | ${perMonth(m.hits * m.hit("w"))} |`,
    `| D1 rows written: misses (${fmt(m.perMiss.written)} a miss: lookup, recording, the Worker's own, its recent-requests row and trim) | ${fmt(m.misses * m.perMiss.written)} | ${perMonth(m.misses * m.perMiss.written)} |`,
    `| D1 rows written: hit counters (${fmt(c.distinctNodesHitPerMinute)} nodes and ${fmt(c.activeTreesPerMinute)} trees a minute, each once: ${fmt(m.counters.written * 60)} rows a minute) | ${fmt(m.counters.written)} | ${perMonth(m.counters.written)} |`,
    `| **D1 rows written** | **${fmt(m.rowsWritten)}** | **${perMonth(m.rowsWritten)}** |`,
    `| D1 rows read (${fmt(m.hit("r"))} a hit, ${fmt(m.perMiss.read)} a miss; counters ${fmt(m.counters.read * 60)} a minute) | ${fmt(m.rowsRead)} | ${perMonth(m.rowsRead)} |`,
    `| D1 queries on the primaries (before the responses ${fmt(m.queriesBefore)}, after ${fmt(m.queriesAfter)}, counters ${fmt(m.counters.statements)}) | ${fmt(m.primaryLoad)} | |`,
    `| Durable Object requests (tree objects ${fmt(m.treeCalls)}, HitTally adds ${fmt(m.tallyAdds)}, tally alarms ${fmt(c.activeTreesPerMinute / 60)}) | ${fmt(m.doRequests)} | ${perMonth(m.doRequests)} |`,
    `| Durable Object duration, GB-s (${a.doWallMs.treeCall} ms a tree call, ${a.doWallMs.tallyAdd} ms an add, each active tree's HitTally held ${c.heldSecondsPerMinute} s a minute, at ${p.prices.doMemoryGB * 1000} MB) | ${fmt(m.doGBs)} | ${perMonth(m.doGBs)} |`,
    `| Durable Object storage rows written (one setAlarm per tally write) | ${fmt(m.doStorageWritten)} | ${perMonth(m.doStorageWritten)} |`,
    `| Analytics Engine data points (${a.analyticsPointsPerRequest} a request) | ${fmt(m.aePoints)} | ${perMonth(m.aePoints)} |`,
    `| Workers requests (CPU ${a.cpuMsPerRequest} ms each) | ${fmt(p.workload.requestsPerSecond)} | ${perMonth(p.workload.requestsPerSecond)} |`,
    `| shards for the load / for ${p.workload.retentionDays} days of storage (${fmt(m.bytesPerDay / 1e9)} GB a day) | ${m.shardsForLoad} / ${m.shardsForStorage} | |`,
    "",
    "| cost per month, Workers Paid (prices: platform.json `sources`) | USD |",
    "| --- | --- |",
    ...Object.entries(m.cost).map(([k, v]) => `| ${k} | ${usd(v)} |`),
    `| **total** | **${usd(m.total)}** |`,
    "",
    `| the next walls (${p.workload.hitRate} hits, ${p.workload.retentionDays}-day retention) | reached at |`,
    "| --- | --- |",
    ...m.walls.map((w) => `| ${w.limit} | ${fmt(w.rps)} req/s |`),
    "",
    "| retention | hit rate | GB/day | shards for storage | shards for load | D1 rows written per month | total per month |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const [retentionDays, hitRate] of [
    [30, 0.9],
    [7, 0.9],
    [1, 0.9],
    [7, 0.99],
  ]) {
    const s = model(counts, p, { ...p.workload, retentionDays, hitRate });
    lines.push(
      `| ${retentionDays} d | ${hitRate} | ${fmt(s.bytesPerDay / 1e9)} | ${s.shardsForStorage} | ${s.shardsForLoad} | ${perMonth(s.rowsWritten)} | ${usd(s.total)} |`,
    );
  }
  lines.push(
    "",
    `D1's meta for single statements (platform.json \`billedRows\`): a counter update of a node ${b.nodeCounterUpdate.written} written / ${b.nodeCounterUpdate.read} read, of a tree ${b.treeCounterUpdate.written} written; a recent-requests row ${b.recentRowInsert.written} written, its delete ${b.recentRowDelete.written}.`,
  );
  const fails = check(p, m);
  if (fails.length) throw new Error(`capacity: arithmetic check FAILED: ${fails.join("; ")}`);
  return lines.join("\n");
}
