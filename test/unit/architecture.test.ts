import { describe, expect, it } from "vitest";

/** Every source file's text, by its path under src/ (Vite reads them at build time: no file system in the Worker runtime). */
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob<string>("../../src/**/*.ts", { query: "?raw", import: "default", eager: true })).map(([path, text]) => [path.replace("../../src/", ""), text]),
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
  [...text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)";/gms)].map((m) => ({ from, to: resolve(from, m[2]), typeOnly: Boolean(m[1]) })),
);

const under = (dir: string) => (path: string) => path.startsWith(`${dir}/`);
const show = (list: Edge[]) => list.map((e) => `${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`);

describe("the layers (routes -> cache -> store -> upstream)", () => {
  it("Should read every source file and its imports", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(50);
    expect(edges).toContainEqual({ from: "cache/key.ts", to: "cache/templates/declared.ts", typeOnly: false });
  });

  it("Should keep the domain pure: src/cache runs only its own code and src/core/protocol.ts, and never sees routes", () => {
    const runtime = edges.filter((e) => under("cache")(e.from) && !e.typeOnly && !under("cache")(e.to) && e.to !== "protocol.ts");
    const routes = edges.filter((e) => under("cache")(e.from) && under("routes")(e.to));
    expect(show([...runtime, ...routes])).toEqual([]);
  });

  it("Should keep the store below the routes, without per-isolate state or HTTP errors", () => {
    const bad = edges.filter((e) => under("store")(e.from) && (under("routes")(e.to) || e.to === "isolate.ts" || e.to === "errors.ts" || e.to === "app.ts"));
    expect(show(bad)).toEqual([]);
  });

  it("Should keep upstream, observability and auth below the routes", () => {
    const bad = edges.filter((e) => (under("upstream")(e.from) || under("observability")(e.from) || under("auth")(e.from)) && under("routes")(e.to));
    const upstream = edges.filter((e) => under("upstream")(e.from) && (under("cache")(e.to) || under("store")(e.to)));
    expect(show([...bad, ...upstream])).toEqual([]);
  });

  it("Should have no import cycle in src/cache", () => {
    const next = new Map<string, string[]>();
    for (const e of edges.filter((x) => under("cache")(x.from) && under("cache")(x.to))) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
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
