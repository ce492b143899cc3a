import { readdirSync, readFileSync } from "node:fs";

/** CPU seconds (user + system) of `root` and its descendants, by command name (workerd, node…), from /proc. */
export function cpuOf(root: number | undefined): Record<string, number> {
  const procs = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return [{ pid: Number(pid), name, ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / 100 }];
      } catch {
        return [];
      }
    });
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) if (!tree.has(p.pid) && tree.has(p.ppid)) tree.add(p.pid), (grew = true);
  }
  const out: Record<string, number> = {};
  for (const p of procs) if (tree.has(p.pid)) out[p.name] = (out[p.name] ?? 0) + p.cpu;
  return out;
}

/** CPU milliseconds per request of each process name between two `cpuOf` readings, e.g. `workerd 1.2, node 0.4`. */
export function cpuPerRequest(before: Record<string, number>, after: Record<string, number>, requests: number): string {
  return Object.keys(after)
    .map((k) => `${k} ${((1000 * (after[k] - (before[k] ?? 0))) / Math.max(1, requests)).toFixed(2)}`)
    .join(", ");
}

/** `A=1,B=2` as vars (the bench scripts' MM_VARS). */
export function varsOf(spec: string | undefined): Record<string, string> {
  return Object.fromEntries(
    (spec ?? "")
      .split(",")
      .filter(Boolean)
      .map((kv) => kv.split("=") as [string, string]),
  );
}
