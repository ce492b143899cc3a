/**
 * `wrangler dev` instances of one bundled build over four local D1 databases,
 * for scripts/shard-load.ts. The Worker is bundled once (`wrangler deploy
 * --dry-run`) into a temporary folder, so that every instance runs the same
 * build even while others edit src/; its wrangler.toml is the repo's with the
 * four `[[d1_databases]]` bindings DB, DB_1, DB_2, DB_3 (the environments
 * dropped, the dashboard assets copied). How many of them hold trees is
 * `D1_SHARDS`, set per instance.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { snapshotWorker, type Snapshot } from "../bench/snapshot";
import { startWranglerDev, type WranglerDev } from "../test/support/wrangler-dev";

/** The D1 bindings of the load configuration, in `D1_SHARDS` order. */
export const BINDINGS = ["DB", "DB_1", "DB_2", "DB_3"];

/** A bundled build and its four-database wrangler.toml. */
export type Build = Snapshot;

/** Bundles the Worker once (bench/snapshot.ts) with the four D1 bindings in its wrangler.toml and no environments. */
export function buildWorker(): Promise<Build> {
  return snapshotWorker((toml) => {
    delete toml.env;
    toml.d1_databases = BINDINGS.map((binding, i) => ({
      binding,
      database_name: `muscle-mem-load-${i}`,
      database_id: `00000000-0000-0000-0000-00000000000${i}`,
      migrations_dir: "migrations",
    }));
  });
}

/** CPU time (ms) used so far by the processes of one `wrangler dev`, by role. */
export interface DevCpu {
  /** The workerd that runs the Worker, its Durable Objects and the local D1 databases. */
  worker: number;
  /** wrangler's proxy in front of it: a second workerd, bound to the public port. */
  proxy: number;
  /** wrangler's own Node processes. */
  wrangler: number;
}

const TICK_MS = 10; // getconf CLK_TCK = 100 on Linux

/** [pid, ppid, utime + stime ticks] of every process, from /proc. */
function processes(): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push([Number(entry), Number(fields[1]), Number(fields[11]) + Number(fields[12])]);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU of `root` and its descendants: the workerd bound to `port` is wrangler's proxy, the other one runs the Worker. */
function cpuOf(root: number, port: number): DevCpu {
  const all = processes();
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of all) {
      if (tree.has(ppid) && !tree.has(pid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  const cpu = { worker: 0, proxy: 0, wrangler: 0 };
  for (const [pid, , ticks] of all) {
    if (!tree.has(pid)) continue;
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    const role = !cmd.includes("workerd") ? "wrangler" : cmd.includes(`entry=127.0.0.1:${port}`) ? "proxy" : "worker";
    cpu[role] += ticks * TICK_MS;
  }
  return cpu;
}

/** The machine's busy and total CPU time so far (ms, all cores), from /proc/stat. */
export function machineCpu(): { busy: number; total: number } {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
  const n = ticks.map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  return { busy: (total - n[3] - n[4]) * TICK_MS, total: total * TICK_MS };
}

/** One running `wrangler dev` with its own state folder. */
export interface Dev {
  url: string;
  /** CPU time its processes have used so far. */
  cpu: () => DevCpu;
  /** Trees per D1 binding (`SELECT COUNT(*) FROM trees`), read from the state folder. */
  treesPerShard: () => Promise<Record<string, number>>;
  stop: () => Promise<void>;
  output: () => string;
}

/**
 * Migrates all four databases in a fresh state folder, then starts `wrangler dev`
 * on a free loopback port with `vars` (e.g. `D1_SHARDS`, `HOT_CACHE_TTL_MS`) and
 * waits for `/healthz`.
 */
export async function startDev(build: Build, vars: Record<string, string>): Promise<Dev> {
  const dev = await startWranglerDev({ config: build.config, vars, logLevel: "error", migrate: BINDINGS, freeInspector: true, readyTimeoutMs: 90_000 });
  running.add(dev);
  const port = Number(new URL(dev.url).port);
  const treesPerShard = async () => {
    const counts: Record<string, number> = {};
    for (const binding of BINDINGS) {
      const [row] = await dev.sql("SELECT COUNT(*) AS n FROM trees", binding);
      counts[binding] = Number(row?.n ?? 0);
    }
    return counts;
  };
  return {
    url: dev.url,
    cpu: () => (dev.pid === undefined ? { worker: 0, proxy: 0, wrangler: 0 } : cpuOf(dev.pid, port)),
    treesPerShard,
    output: dev.output,
    stop: async () => {
      running.delete(dev);
      await dev.stop();
    },
  };
}

/** The instances still running, for an interrupted run. */
const running = new Set<WranglerDev>();

/** Stops every instance this module started (the process groups it spawned) and removes their state. */
export function killAll(): void {
  for (const dev of running) {
    dev.kill();
    rmSync(dev.stateDir, { recursive: true, force: true });
  }
  running.clear();
}
