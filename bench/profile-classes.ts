/**
 * Attributes a V8 CPU profile of `wrangler dev`'s Worker isolate (where the Worker, its Durable Objects and the
 * D1 binding's client run together) to classes: the Worker's request path, each object, the runtime's own JS,
 * idle, GC and native work. The profile names each frame by script id, line and column only; the bundle
 * wrangler dev serves is esbuild's unminified output, which opens each module with a `// src/…` comment, so
 * a frame's line says which source module it is in (`moduleIndex`).
 */
import WebSocket from "ws";

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; scriptId: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export type Send = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** A DevTools protocol session on a `wrangler dev` inspector (the first target). */
export async function devtools(port: number): Promise<{ send: Send; close: () => void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((ok, fail) => ws.once("open", ok).once("error", fail));
  const pending = new Map<number, (result: Record<string, unknown>) => void>();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown> };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result ?? {});
  });
  let next = 0;
  const send: Send = (method, params = {}) =>
    new Promise((ok) => {
      const id = ++next;
      pending.set(id, ok);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => ws.close() };
}

/**
 * Per script id: the source module of each line (from esbuild's `// path` module comments), for the bundled
 * scripts; the ids a profile names are looked up once each (wrangler dev may reload the Worker: a new id).
 */
export type ModuleIndex = Map<string, string[]>;

export async function moduleIndex(send: Send, scriptIds: Iterable<string>, index: ModuleIndex = new Map()): Promise<ModuleIndex> {
  const missing = [...new Set(scriptIds)].filter((id) => id !== "0" && !index.has(id));
  if (missing.length === 0) return index;
  await send("Debugger.enable");
  for (const scriptId of missing) {
    const { scriptSource } = (await send("Debugger.getScriptSource", { scriptId })) as { scriptSource?: string };
    let current: string | undefined;
    const lines = (scriptSource ?? "").split("\n").map((line) => {
      const m = /^\/\/ ([\w@./-]+\.[cm]?[jt]sx?)$/.exec(line);
      if (m) current = m[1].replace(/^(\.\.\/)+/, "");
      return current ?? "";
    });
    // Only a bundle (a script with module comments) is indexed; the runtime's scripts map to nothing.
    index.set(scriptId, current === undefined ? [] : lines);
  }
  await send("Debugger.disable");
  return index;
}

/** The classes a sample is put in, in the order the tables print them. */
export const CLASSES = [
  "worker",
  "store, owner unknown",
  "writer",
  "learner",
  "tally",
  "objects (other)",
  "runtime JS",
  "bundle (no src frame)",
  "GC",
  "program",
  "idle",
] as const;
export type Class = (typeof CLASSES)[number];

/** Modules that run only inside one object (learning runs in the learner's alarm; recording in the writer). */
const OBJECT_MODULES: Array<[RegExp, Class]> = [
  [/src\/store\/objects\/tree-writer\.ts$/, "writer"],
  [/src\/store\/objects\/tree-learner\.ts$/, "learner"],
  [/src\/store\/objects\/hit-tally\.ts$/, "tally"],
  [/src\/store\/objects\/(lookup-or-join|single-flight|recent-writes|seed)\.ts$/, "writer"],
  [/src\/store\/tree\/(record|tally-batch|tally-pages)\.ts$/, "writer"],
  [/src\/store\/templates\/(learn|learn-batch|save)\.ts$/, "learner"],
  [/src\/store\/objects\/.*\.ts$/, "objects (other)"],
];

/**
 * Store code both the Worker and the objects run (the D1 meter, tree reads): a stack that holds only these
 * (an async function resumed after an await has no caller on its stack) cannot say whose it is.
 */
const SHARED = /^src\/(store\/|observability\/store-meter\.ts$)/;

/**
 * The class of one stack (frames from the leaf to the root): the object whose method or object-only module
 * is on it; else the Worker's when any frame is in src/ or hono (the fetch handler, hono, src/engine,
 * src/http, src/providers, and src/core or src/cache code the request path calls; the relay floor's fetch);
 * "store, owner unknown" when its only src frames are store code (`SHARED`); else the runtime's own JS
 * (the D1 binding's client, streams: scripts that are not the bundle) or bundle code with no src frame
 * (a library resumed after an await).
 */
export function classOf(frames: ProfileNode["callFrame"][], modules: ModuleIndex): Class {
  const first = frames[0]?.functionName;
  if (first === "(idle)") return "idle";
  if (first === "(garbage collector)") return "GC";
  if (first === "(program)" || first === "(root)") return "program";
  const paths = frames.map((f) => modules.get(f.scriptId)?.[f.lineNumber]);
  for (const [re, cls] of OBJECT_MODULES) if (paths.some((p) => p && re.test(p))) return cls;
  const worker = (p: string) =>
    (p.startsWith("src/") && !SHARED.test(p)) || p.includes("node_modules/hono/") || p.endsWith("floors/relay.ts") || p === "relay.ts";
  if (paths.some((p) => p && worker(p))) return "worker";
  if (paths.some((p) => p && SHARED.test(p))) return "store, owner unknown";
  if (paths.some((p) => p !== undefined)) return "bundle (no src frame)";
  return "runtime JS";
}

/**
 * Milliseconds of samples per class in one profile (a sample lasts until the next one); `leaves`, when
 * given, gains the milliseconds of each class by the nearest module on the stack (`class: module`).
 */
export function splitProfile(profile: Profile, modules: ModuleIndex, leaves?: Map<string, number>): Record<Class, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, { cls: Class; module: string }>();
  const out = Object.fromEntries(CLASSES.map((c) => [c, 0])) as Record<Class, number>;
  profile.samples.forEach((id, i) => {
    let seen = memo.get(id);
    if (!seen) {
      const frames: ProfileNode["callFrame"][] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const node = byId.get(at);
        if (node && node.callFrame.functionName !== "(root)") frames.push(node.callFrame);
      }
      if (frames.length === 0) frames.push(byId.get(id)!.callFrame);
      // The nearest module of the bundle (or runtime script) on the stack: whose code the sample is in or under.
      const module = frames.map((f) => modules.get(f.scriptId)?.[f.lineNumber] || f.url).find(Boolean) ?? frames[0].functionName;
      seen = { cls: classOf(frames, modules), module };
      memo.set(id, seen);
    }
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    out[seen.cls] += ms;
    if (leaves) {
      const key = `${seen.cls}: ${seen.module}`;
      leaves.set(key, (leaves.get(key) ?? 0) + ms);
    }
  });
  return out;
}
