import { describe, expect, it } from "vitest";

/** Every source file's text, by its path under src/ (Vite reads them at build time: no file system in the Worker runtime). */
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob<string>("../../src/**/*.ts", { query: "?raw", import: "default", eager: true })).map(([path, text]) => [
    path.replace("../../src/", ""),
    text,
  ]),
);

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Resolves a relative specifier against a file under src/ (`../store/record` from `cache/provider.ts` is `store/record.ts`). */
function resolve(from: string, specifier: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  const base = parts.join("/");
  return sources[`${base}.ts`] !== undefined ? `${base}.ts` : `${base}/index.ts`;
}

/** The relative imports and re-exports of every file under src/. */
const edges: Edge[] = Object.entries(sources).flatMap(([from, text]) =>
  [...text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)";/gms)].map((m) => ({
    from,
    to: resolve(from, m[2]),
    typeOnly: Boolean(m[1]),
  })),
);

const under = (dir: string) => (path: string) => path.startsWith(`${dir}/`);
const show = (list: Edge[]) => list.map((e) => `${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`);
/** Edges out of `dir` (its files) to anything outside `allowed` (folders under src/, or files at src/'s top). */
const escaping = (dir: string, allowed: string[], opts: { types?: string[] } = {}) =>
  edges.filter((e) => {
    if (!under(dir)(e.from)) return false;
    const ok = (list: string[]) => list.some((a) => (a.endsWith(".ts") ? e.to === a : under(a)(e.to)));
    if (ok([dir, ...allowed])) return false;
    return !(e.typeOnly && ok(opts.types ?? []));
  });

/**
 * The layers, lowest first: core (canonical form, hashing, limits, errors, the recording type) <- cache (the
 * pure domain: policy, templates, the provider seam) <- providers (one folder per API) <- store (D1, Durable
 * Objects) <- engine (the cached flow) <- http (app, routes, API) <- index. upstream and observability are
 * services below the engine. docs/architecture.md draws the same graph.
 */
describe("the layers (http -> engine -> store -> providers -> cache -> core)", () => {
  it("Should read every source file and its imports", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(150);
    expect(edges.length).toBeGreaterThan(500);
    expect(edges).toContainEqual({ from: "providers/chat/key.ts", to: "cache/templates/declared.ts", typeOnly: false });
  });

  it("Should keep src/core to itself: it imports nothing else in src/", () => {
    expect(show(escaping("core", []))).toEqual([]);
  });

  it("Should keep the domain (src/cache) pure: only core and itself, and the config type", () => {
    expect(show(escaping("cache", ["core"], { types: ["config.ts"] }))).toEqual([]);
  });

  it("Should keep every provider off storage, the engine and HTTP: only core, cache and providers", () => {
    expect(show(escaping("providers", ["core", "cache"], { types: ["config.ts"] }))).toEqual([]);
  });

  it("Should keep the store below the engine and HTTP (the colo layer's forget after a prune is the one way up)", () => {
    const bad = escaping("store", ["core", "cache", "providers", "config.ts", "observability"]).filter((e) => e.to !== "engine/lookup/colo-cache.ts");
    expect(show(bad)).toEqual([]);
  });

  it("Should keep the engine below HTTP", () => {
    expect(show(escaping("engine", ["core", "cache", "providers", "store", "upstream", "observability", "config.ts"]))).toEqual([]);
  });

  it("Should keep config.ts below the store: it reads only core (the price table), cache's defaults and the log", () => {
    const bad = edges.filter((e) => e.from === "config.ts" && !["core", "cache", "observability"].some((dir) => under(dir)(e.to)));
    expect(show(bad)).toEqual([]);
    expect(edges).toContainEqual({ from: "config.ts", to: "core/prices.ts", typeOnly: false });
  });

  it("Should keep upstream a service: only core and the log", () => {
    expect(show(escaping("upstream", ["core", "observability"]))).toEqual([]);
  });

  it("Should keep observability below the engine: logs, reports and the store meter (which names the D1 bindings)", () => {
    expect(show(escaping("observability", ["core", "config.ts", "store/shards"]))).toEqual([]);
  });

  it("Should have no import cycle anywhere in src/, type-only imports included", () => {
    const next = new Map<string, string[]>();
    for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push([...trail.slice(trail.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const to of next.get(file) ?? []) visit(to, [...trail, file]);
      state.set(file, "done");
    };
    for (const file of next.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});

/**
 * Config is handed in, not looked up (docs/architecture.md, "Services"): the vars are parsed where the
 * isolate's services are built (src/engine/services.ts: the fetch handler's middleware and the cron) and in
 * each Durable Object's constructor; everything else takes `config` (or `c.var.services`) as given.
 */
describe("config handed in", () => {
  const callers = Object.entries(sources)
    .filter(([path]) => path !== "config.ts")
    .flatMap(([path, text]) => [...text.matchAll(/\bconfigOf\(/g)].map(() => path))
    .sort();

  it("Should call configOf only where services are built: the services builder and each object's constructor, once each", () => {
    expect(callers).toEqual(["engine/services.ts", "store/objects/hit-tally.ts", "store/objects/tree-learner.ts", "store/objects/tree-writer.ts"]);
  });

  it("Should parse an object's config in its constructor (a field initialiser), never in a method", () => {
    for (const path of ["store/objects/hit-tally.ts", "store/objects/tree-learner.ts", "store/objects/tree-writer.ts"]) {
      expect(sources[path]).toMatch(/^ {2}private readonly config: Config = configOf\(this\.env\);$/m);
    }
  });
});
