import type { WranglerDev } from "../test/support/wrangler-dev";
import type { ChatBody } from "../tools/scripted-model";
import { chatSpec, expectOutcome, log, medianPhases, post, serverTimingOf } from "./http";
import { mixed, percentile, type Measure } from "./load";
import { numbers, type Row } from "./table";
import { caseBodies, FULL_MISS_MARK, learnedBodies, padTemplates, refundCases, templateCount, treeHeaders, warmTree } from "./template-trees";

export interface TemplateBenchOptions {
  /** Templates in the big tree (the small one holds `small`). */
  templates: number;
  small: number;
  rounds: number;
  seconds: number;
  /** Sequential full-miss samples per tree. */
  missSamples: number;
}

interface MissProbe {
  p50: number;
  p99: number;
  samples: number;
  outcomes: Record<string, number>;
  /** Median `server-timing` phases (ms). */
  phases: Record<string, number>;
}

/**
 * Full misses (the model answers) one at a time, rotating over the trees so
 * that each sample i hits every tree under the same conditions. Each body is
 * new, and its last message skeleton is one no template was learned for.
 */
async function fullMissProbe(url: string, namespaces: string[], base: ChatBody, samples: number): Promise<Record<string, MissProbe>> {
  const times: Record<string, number[]> = Object.fromEntries(namespaces.map((n) => [n, []]));
  const outcomes: Record<string, Record<string, number>> = Object.fromEntries(namespaces.map((n) => [n, {}]));
  const phases: Record<string, Array<Record<string, number>>> = Object.fromEntries(namespaces.map((n) => [n, []]));
  const tag = Date.now().toString(36);
  for (let i = -3; i < samples; i++) {
    const order = namespaces.map((_, j) => namespaces[(j + i + 3) % namespaces.length]);
    for (const namespace of order) {
      const body = { ...base, messages: [...base.messages, { role: "user", content: `Also, one more question ${FULL_MISS_MARK} ${tag} ${i}.` }] };
      const started = performance.now();
      const res = await post(url, body, treeHeaders(namespace));
      await res.arrayBuffer();
      const ms = performance.now() - started;
      if (i < 0) continue; // warm-up
      const outcome = res.headers.get("muscle-mem-cache") ?? `status-${res.status}`;
      outcomes[namespace][outcome] = (outcomes[namespace][outcome] ?? 0) + 1;
      times[namespace].push(ms);
      phases[namespace].push(serverTimingOf(res));
    }
  }
  return Object.fromEntries(
    namespaces.map((n) => {
      const sorted = [...times[n]].sort((a, b) => a - b);
      return [
        n,
        { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), samples: sorted.length, outcomes: outcomes[n], phases: medianPhases(phases[n]) },
      ];
    }),
  );
}

/** Median `server-timing` phases of `bodies` sent one at a time, `passes` times over. */
async function phaseProbe(url: string, bodies: ChatBody[], headers: Record<string, string>, passes: number): Promise<Record<string, number>> {
  const timings: Array<Record<string, number>> = [];
  for (let pass = 0; pass < passes; pass++) {
    for (const body of bodies) {
      const res = await post(url, body, headers);
      await res.arrayBuffer();
      timings.push(serverTimingOf(res));
    }
  }
  return medianPhases(timings);
}

const phaseText = (p: Record<string, number>) =>
  Object.entries(p)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");

const missDetail = (name: string, m: MissProbe) => `${name}: ${m.p50.toFixed(2)} / ${m.p99.toFixed(2)} ms`;

/**
 * The template rows (issue 4): an exact hit must not get slower in a tree
 * with many learned templates, and a learned hit's and a full miss's cost
 * must not grow with the number of templates. Three trees of the same
 * refund-desk frame (namespaces differ): one warmed with induction off (no
 * templates), two warmed alike with induction on, then padded to `small`
 * and `templates` templates with direct inserts.
 */
export async function templateRows(dev: WranglerDev, config: string, o: TemplateBenchOptions): Promise<{ rows: Row[]; results: Record<string, unknown> }> {
  const tag = Date.now().toString(36);
  const ns = { none: `tpl-none-${tag}`, small: `tpl-small-${tag}`, big: `tpl-big-${tag}`, crowd: `tpl-crowd-${tag}` };
  // 8 delivered cases (3 steps each: look up, refund, confirm) and one shipped, processing, refunded (2 steps).
  const warm = refundCases(11, 8, true).flatMap(caseBodies);
  log(`templates: warming four trees with ${warm.length} recorded requests each`);
  const trees = {
    none: await warmTree(dev, ns.none, warm, false),
    small: await warmTree(dev, ns.small, warm, true),
    big: await warmTree(dev, ns.big, warm, true),
    crowd: await warmTree(dev, ns.crowd, warm, true),
  };
  const learning = [ns.small, ns.big, ns.crowd];
  const fresh = refundCases(22, 16, false).flatMap(caseBodies);
  const learned = await learnedBodies(dev, learning, fresh);
  const learnedReal = { small: await templateCount(dev, trees.small), big: await templateCount(dev, trees.big), crowd: await templateCount(dev, trees.crowd) };
  log(`templates: learned ${JSON.stringify(learnedReal)} templates; ${learned.length} of ${fresh.length} new requests served by them`);
  if (learned.length < 8)
    throw new Error(`templates: only ${learned.length} requests are served by learned templates; the learned rows would not measure the learned path`);
  if ((await templateCount(dev, trees.none)) !== 0) throw new Error("templates: the tree warmed with induction off holds templates");

  const counts = {
    small: await padTemplates(dev, config, trees.small, o.small),
    big: await padTemplates(dev, config, trees.big, o.templates),
    crowd: await padTemplates(dev, config, trees.crowd, o.templates, true),
  };
  const perKey = (await dev.sql(`SELECT COUNT(*) AS n FROM templates WHERE tree_id = '${trees.crowd}' GROUP BY lookup_key`)).map((r) => Number(r.n));
  log(
    `templates: padded to ${JSON.stringify(counts)} templates; crowded tree: ${perKey.length} lookup keys, ${Math.min(...perKey)}-${Math.max(...perKey)} templates each`,
  );
  // The copies have other lookup keys: the same requests must still be served by the real templates.
  const still = await learnedBodies(dev, learning, learned, 0);
  if (still.length !== learned.length)
    throw new Error(`templates: after padding, ${learned.length - still.length} requests are no longer served by a template`);

  // Request by request on one connection: the trees compared see the same moments of a shared machine.
  // Exact and learned loads run apart, so that each exact body comes back well within the hot-cache TTL.
  const rounds = { rounds: o.rounds, seconds: o.seconds };
  log("templates: exact hits, tree with templates vs none");
  const exact = await mixed(dev.url, [chatSpec("exact none", warm, treeHeaders(ns.none)), chatSpec("exact big", warm, treeHeaders(ns.big))], rounds);
  log("templates: learned hits, small vs big vs crowded tree");
  const learnedLoads = await mixed(
    dev.url,
    [
      chatSpec("learned small", learned, treeHeaders(ns.small)),
      chatSpec("learned big", learned, treeHeaders(ns.big)),
      chatSpec("learned crowd", learned, treeHeaders(ns.crowd)),
    ],
    rounds,
  );
  const m = { ...exact, ...learnedLoads };
  expectOutcome("exact hit, no templates", m["exact none"], "hit");
  expectOutcome(`exact hit, ${counts.big} templates`, m["exact big"], "hit");
  expectOutcome(`learned hit, ${counts.small} templates`, m["learned small"], "hit+template");
  expectOutcome(`learned hit, ${counts.big} templates`, m["learned big"], "hit+template");
  expectOutcome(`learned hit, ${counts.crowd} templates under the served keys`, m["learned crowd"], "hit+template");

  // Where a learned hit's time goes (server-timing: parse, lookup = the exact read, total).
  const learnedPhases = {
    small: await phaseProbe(dev.url, learned, treeHeaders(ns.small), 2),
    big: await phaseProbe(dev.url, learned, treeHeaders(ns.big), 2),
    crowd: await phaseProbe(dev.url, learned, treeHeaders(ns.crowd), 2),
  };
  log(`templates: ${o.missSamples} full misses per tree`);
  const misses = await fullMissProbe(dev.url, [ns.none, ns.small, ns.big], warm[0], o.missSamples);
  for (const [n, probe] of Object.entries(misses)) {
    if (Object.keys(probe.outcomes).some((k) => k !== "miss"))
      throw new Error(`templates: full-miss probe in ${n} was not all misses: ${JSON.stringify(probe.outcomes)}`);
  }
  const after = { none: await templateCount(dev, trees.none), small: await templateCount(dev, trees.small), big: await templateCount(dev, trees.big) };
  if (after.none !== 0) throw new Error(`templates: the full-miss probe taught the template-free tree ${after.none} templates`);

  const ratio = (a: Measure | MissProbe, b: Measure | MissProbe) => a.p50 / b.p50;
  const sizes = (bodies: ChatBody[]) => {
    const s = bodies.map((b) => JSON.stringify(b).length).sort((x, y) => x - y);
    return `${s[0]}-${s.at(-1)} B`;
  };
  const exactRatio = ratio(m["exact big"], m["exact none"]);
  const learnedRatio = ratio(m["learned big"], m["learned small"]);
  const crowdRatio = ratio(m["learned crowd"], m["learned small"]);
  const missRatio = ratio(misses[ns.big], misses[ns.small]);
  const rows: Row[] = [
    {
      row: `exact hit p50, tree with ${counts.big} learned templates / tree with none`,
      target: "≤ 1.1",
      value: exactRatio.toFixed(2),
      met: exactRatio <= 1.1,
      detail: `1 connection, requests of both trees alternating; ${warm.length} recorded requests (${sizes(warm)}) cycled. none: ${numbers(m["exact none"])}; ${counts.big}: ${numbers(m["exact big"])}`,
    },
    {
      row: `learned-template hit p50, ${counts.big} templates / ${counts.small} templates`,
      target: "≤ 1.2",
      value: learnedRatio.toFixed(2),
      met: learnedRatio <= 1.2,
      detail: `1 connection, requests of the three trees alternating; ${learned.length} exact misses (${sizes(learned)}) each served by a learned template (\`muscle-mem-template\` on every response). ${counts.small}: ${numbers(m["learned small"])}; ${counts.big}: ${numbers(m["learned big"])}`,
    },
    {
      row: `learned-template hit p50 − exact hit p50 (tree with ${counts.big} templates)`,
      target: "report",
      value: `${(m["learned big"].p50 - m["exact big"].p50).toFixed(2)} ms`,
      met: null,
      detail: `an exact miss (one D1 read: misses are not kept in isolate memory) then the template query; an exact hit reads isolate memory. server-timing medians (ms): ${counts.small}: ${phaseText(learnedPhases.small)}; ${counts.big}: ${phaseText(learnedPhases.big)}`,
    },
    {
      row: `learned-template hit p50, ${counts.crowd} templates under the served templates' lookup keys / ${counts.small} templates`,
      target: "report",
      value: crowdRatio.toFixed(2),
      met: null,
      detail: `worst case, not bounded by design: the lookup query reads and sorts every live template under the request's keys before its LIMIT 8; ${perKey.length} keys with ${Math.min(...perKey)}-${Math.max(...perKey)} templates each. ${counts.small}: ${numbers(m["learned small"])}; crowded: ${numbers(m["learned crowd"])}; server-timing medians (ms): ${phaseText(learnedPhases.crowd)}`,
    },
    {
      row: `full miss p50, ${counts.big} templates / ${counts.small} templates`,
      target: "≤ 1.2",
      value: missRatio.toFixed(2),
      met: missRatio <= 1.2,
      detail: `${misses[ns.big].samples} sequential misses per tree, rotating. ${missDetail(String(counts.small), misses[ns.small])}; ${missDetail(String(counts.big), misses[ns.big])}; ${missDetail("none", misses[ns.none])}`,
    },
    {
      row: `full miss p50, tree with ${counts.big} templates / tree with none`,
      target: "report",
      value: ratio(misses[ns.big], misses[ns.none]).toFixed(2),
      met: null,
      detail: `${(misses[ns.big].p50 - misses[ns.none].p50).toFixed(2)} ms. server-timing medians (ms; claim = template probe + Durable Object join): none: ${phaseText(misses[ns.none].phases)}; ${counts.big}: ${phaseText(misses[ns.big].phases)}`,
    },
  ];
  const results = {
    namespaces: ns,
    trees,
    counts,
    learnedReal,
    crowdPerKey: perKey,
    learnedRequests: learned.length,
    warmRequests: warm.length,
    templatesAfterMisses: after,
    measures: m,
    learnedPhases,
    misses,
  };
  return { rows, results };
}
