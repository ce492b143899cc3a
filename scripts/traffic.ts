/**
 * `npm run traffic`: fills the dashboard of a running `npm run start:demo` with realistic agent
 * traffic, with no API key and no network. It starts a scripted model on 127.0.0.1:9911 (the
 * upstream `npm run start:demo` points the Worker at), checks that the Worker really sends its
 * misses there, then runs a refund desk and a sign-up intake (branches, learned templates from
 * several customers, exact hits), refunds whose client declares its values, and recorded
 * tau-bench conversations twice, all under the bearer key sk-muscle-mem-traffic.
 *
 *   npm run traffic [-- --url http://localhost:8787] [--seed N] [--delay-ms MS]
 *
 * `--seed N` draws other customers (the same seed again is all hits); `--delay-ms` is how long
 * the scripted model takes per answer (default 150, like a fast real one).
 */
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import { startTrafficModel, TRAFFIC_MODEL_PORT, trafficWorkloads } from "../tools/traffic/model";
import { probe, sendTraffic, TRAFFIC_KEY, type TrafficPart } from "../tools/traffic/run";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: "http://localhost:8787" },
    seed: { type: "string", default: "1" },
    "delay-ms": { type: "string", default: "150" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("npm run traffic [-- --url http://localhost:8787] [--seed N] [--delay-ms MS]   (against a running npm run start:demo)");
  process.exit(0);
}
const workerUrl = values.url.replace(/\/+$/, "").replace(/\/v1$/, "");

function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(false));
    server.listen(port, "127.0.0.1", () => server.close(() => done(true)));
  });
}

function row(p: TrafficPart): string {
  const s = p.served;
  return `${p.name.padEnd(36)} ${p.namespace.padEnd(22)} ${String(p.requests).padStart(4)}   model ${String(s.model).padStart(3)}  exact ${String(s.exact).padStart(3)}  declared ${String(s.declared).padStart(2)}  learned ${String(s.learned).padStart(3)}  wrong ${p.wrong}`;
}

if (!(await portFree(TRAFFIC_MODEL_PORT))) {
  console.error(`traffic: 127.0.0.1:${TRAFFIC_MODEL_PORT} is taken (is another npm run traffic running?). Stop that process and try again.`);
  process.exit(1);
}
const model = await startTrafficModel({ delayMs: Number(values["delay-ms"]) });
console.log(`traffic: scripted model on ${model.url} (${values["delay-ms"]} ms per answer)`);
try {
  const check = await probe(workerUrl, model);
  if (!check.ok) {
    console.error(`\ntraffic: ${check.problem}`);
    process.exitCode = 1;
  } else {
    console.log(`traffic: ${workerUrl} sends its misses here; sending traffic as ${TRAFFIC_KEY}\n`);
    console.log(`${"workflow".padEnd(36)} ${"namespace".padEnd(22)} reqs   served by`);
    const parts = await sendTraffic(workerUrl, trafficWorkloads(), { seed: Number(values.seed), onPart: (p) => console.log(row(p)) });
    const wrong = parts.reduce((n, p) => n + p.wrong, 0);
    console.log(`\nmodel generations: ${model.generations()}; wrong answers: ${wrong}`);
    console.log(`\nOpen ${workerUrl}/ and log in with the admin token (dev-admin-token, sees every tenant)`);
    console.log(`or with ${TRAFFIC_KEY} (sees only this traffic's trees). Run again with --seed 2 for new customers.`);
    if (wrong > 0) process.exitCode = 1;
  }
} finally {
  await model.close();
}
