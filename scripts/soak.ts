/**
 * A bounded soak of the Worker under `wrangler dev` on loopback: many
 * concurrent agents of several tenants mix hits, misses, streams, no-store
 * bypasses and prunes for a fixed time, then the run is audited against D1.
 *
 *   npm run soak                       # 3 minutes, 24 agents, 4 tenants
 *   npm run soak -- --seconds 600 --agents 40 --tenants 6
 *
 * The short form runs in `npm test` (test/e2e/soak.test.ts).
 */
import { keyAnswer, keyRequest } from "../src/providers/chat/key";
import { tenantOf } from "../src/core/hash";
import { chatRequest } from "../src/core/messages";
import { startWranglerDev } from "../test/support/wrangler-dev";
import { startTestUpstream } from "../tools/test-upstream";

export interface SoakOptions {
  seconds: number;
  agents: number;
  tenants: number;
  /** Questions per tenant (shared texts: every tenant asks the same ones). */
  questions?: number;
  log?: (line: string) => void;
}

export interface SoakReport {
  requests: number;
  hits: number;
  misses: number;
  bypasses: number;
  streams: number;
  prunes: number;
  errors: number;
  wrongAnswers: number;
  crossTenantHits: number;
  duplicatePathHashes: number;
  orphanNodes: number;
  nodeCountMismatches: number;
  counters: {
    hitsServed: number;
    hitsCounted: number;
    missesServed: number;
    missesCounted: number;
    bypassesServed: number;
    bypassesCounted: number;
    generations: number;
  };
  errorSamples: string[];
}

const ADMIN = "soak-admin-token";
const MODEL = "echo-soak";

/** Questions of different token counts, so no two can be generalised into one learned template. */
const question = (i: number) => `soak question ${"step ".repeat(i)}done`;

interface Expected {
  nodeHash: string;
  content: string;
}

/** The exact answer node and text each tenant must be served for each question. */
function expectations(keys: string[], questions: number): Map<string, Expected> {
  const out = new Map<string, Expected>();
  for (const key of keys) {
    for (let q = 0; q < questions; q++) {
      const body = chatRequest.parse({ model: MODEL, messages: [{ role: "user", content: question(q) }] });
      const keyed = keyRequest(body, tenantOf(`Bearer ${key}`), "soak");
      if (!keyed.ok) throw new Error("soak request not keyable");
      const content = `echo: ${question(q)}`;
      const answer = keyAnswer(keyed.key, { role: "assistant", content });
      if (!answer) throw new Error("soak answer not keyable");
      out.set(`${key}|${q}`, { nodeHash: answer.hash, content });
    }
  }
  return out;
}

/** Reads an SSE chat stream into its text and checks it ended with [DONE]. */
function streamedText(raw: string): string | null {
  if (!raw.includes("data: [DONE]")) return null;
  let text = "";
  for (const line of raw.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string | null } }> };
    text += chunk.choices?.[0]?.delta?.content ?? "";
  }
  return text;
}

/** Runs the soak and audits it; never throws for a failed check, it reports it. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const questions = options.questions ?? 12;
  const upstream = await startTestUpstream(0);
  const dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: upstream.url, ADMIN_TOKEN: ADMIN, COUNTER_FLUSH_MS: "0", HOT_CACHE_TTL_MS: "500" } });
  const keys = Array.from({ length: options.tenants }, (_, i) => `sk-soak-tenant-${i}-${crypto.randomUUID().slice(0, 8)}`);
  const expected = expectations(keys, questions);
  const report: SoakReport = {
    requests: 0,
    hits: 0,
    misses: 0,
    bypasses: 0,
    streams: 0,
    prunes: 0,
    errors: 0,
    wrongAnswers: 0,
    crossTenantHits: 0,
    duplicatePathHashes: 0,
    orphanNodes: 0,
    nodeCountMismatches: 0,
    counters: { hitsServed: 0, hitsCounted: 0, missesServed: 0, missesCounted: 0, bypassesServed: 0, bypassesCounted: 0, generations: 0 },
    errorSamples: [],
  };
  const fail = (what: string) => {
    report.errors++;
    if (report.errorSamples.length < 10) report.errorSamples.push(what);
  };
  const servedNodes: string[] = [];
  const deadline = Date.now() + options.seconds * 1000;
  let seed = 1;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;

  const agent = async (a: number) => {
    const key = keys[a % keys.length];
    while (Date.now() < deadline) {
      const q = Math.floor(random() * questions);
      const stream = random() < 0.4;
      const noStore = random() < 0.05;
      const want = expected.get(`${key}|${q}`) as Expected;
      report.requests++;
      if (stream) report.streams++;
      try {
        const res = await fetch(`${dev.url}/v1/chat/completions`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${key}`,
            "muscle-mem-namespace": "soak",
            ...(noStore ? { "cache-control": "no-store" } : {}),
          },
          body: JSON.stringify({ model: MODEL, stream, messages: [{ role: "user", content: question(q) }] }),
        });
        const raw = await res.text();
        const outcome = res.headers.get("muscle-mem-cache");
        if (res.status !== 200) {
          fail(`${res.status} ${outcome}: ${raw.slice(0, 200)}`);
          continue;
        }
        const text = stream
          ? streamedText(raw)
          : ((JSON.parse(raw) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content ?? null);
        if (text !== want.content) {
          report.wrongAnswers++;
          fail(`wrong answer (${outcome}): ${String(text).slice(0, 80)}`);
        }
        if (outcome === "hit") {
          report.hits++;
          const node = res.headers.get("muscle-mem-node") ?? "";
          if (node !== want.nodeHash) report.crossTenantHits++;
          else servedNodes.push(node);
        } else if (outcome === "miss") report.misses++;
        else if (outcome === "bypass") report.bypasses++;
        else fail(`no cache header: ${outcome}`);
      } catch (error) {
        fail(`fetch failed: ${String(error)}`);
      }
    }
  };

  const pruner = async () => {
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1500));
      const node = servedNodes[Math.floor(random() * servedNodes.length)];
      if (!node) continue;
      const res = await fetch(`${dev.url}/api/nodes/${node}`, { method: "DELETE", headers: { authorization: `Bearer ${ADMIN}` } });
      await res.arrayBuffer();
      if (res.status === 200) report.prunes++;
      else if (res.status !== 404) fail(`prune ${res.status}`);
    }
  };

  try {
    log(`soak: ${options.agents} agents, ${options.tenants} tenants, ${options.seconds} s against ${dev.url}`);
    await Promise.all([...Array.from({ length: options.agents }, (_, a) => agent(a)), pruner()]);
    // Let the last recordings and counter flushes land: until the counters reach what was served, or 20 s
    // (a fixed 2 s wait lost the last few hits' flushes on a loaded machine, and the audit below failed).
    const sumsOf = async () => (await dev.sql("SELECT sum(hits) AS hits, sum(misses) AS misses, sum(bypasses) AS bypasses FROM trees"))[0] ?? {};
    const landBy = Date.now() + 20_000;
    let sums = await sumsOf();
    while (
      Date.now() < landBy &&
      (Number(sums.hits ?? 0) < report.hits || Number(sums.misses ?? 0) < report.misses || Number(sums.bypasses ?? 0) < report.bypasses)
    ) {
      await new Promise((r) => setTimeout(r, 250));
      sums = await sumsOf();
    }
    await new Promise((r) => setTimeout(r, 500));
    sums = await sumsOf();
    const num = (rows: Array<Record<string, unknown>>, field = "n") => Number(rows[0]?.[field] ?? 0);
    report.duplicatePathHashes = (await dev.sql("SELECT hash FROM nodes GROUP BY hash HAVING count(*) > 1")).length;
    report.orphanNodes = num(
      await dev.sql("SELECT count(*) AS n FROM nodes WHERE parent NOT IN (SELECT hash FROM nodes) AND parent NOT IN (SELECT id FROM trees)"),
    );
    report.nodeCountMismatches = num(await dev.sql("SELECT count(*) AS n FROM trees t WHERE node_count != (SELECT count(*) FROM nodes WHERE tree_id = t.id)"));
    report.counters = {
      hitsServed: report.hits,
      hitsCounted: Number(sums.hits ?? 0),
      missesServed: report.misses,
      missesCounted: Number(sums.misses ?? 0),
      bypassesServed: report.bypasses,
      bypassesCounted: Number(sums.bypasses ?? 0),
      generations: upstream.count(MODEL).generations,
    };
  } finally {
    await dev.stop();
    await upstream.close();
  }
  return report;
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await runSoak({ seconds: arg("seconds", 180), agents: arg("agents", 24), tenants: arg("tenants", 4), log: console.log });
  console.log(JSON.stringify(report, null, 2));
  const c = report.counters;
  const ok =
    report.errors === 0 &&
    report.crossTenantHits === 0 &&
    report.duplicatePathHashes === 0 &&
    report.orphanNodes === 0 &&
    report.nodeCountMismatches === 0 &&
    c.hitsCounted === c.hitsServed &&
    c.missesCounted === c.missesServed &&
    c.bypassesCounted === c.bypassesServed &&
    c.generations === c.missesServed + c.bypassesServed;
  console.log(ok ? "soak: OK" : "soak: FAILED");
  process.exit(ok ? 0 : 1);
}
