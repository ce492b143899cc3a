/**
 * `npm run arch:graph`: the import graph of src/, folder by folder, from the real imports (the same
 * reading as test/unit/architecture.test.ts: relative `import` and `export … from`, type-only marked).
 * Prints the block that docs/architecture.md holds between its `arch:graph` markers; `--write` puts it
 * there, `--check` fails when the doc's block differs from the code.
 *
 * @example npm run arch:graph -- --write
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");
const DOC = join(ROOT, "docs/architecture.md");
const BEGIN = "<!-- arch:graph (npm run arch:graph -- --write) -->";
const END = "<!-- /arch:graph -->";

/**
 * The layers, lowest first, as test/unit/architecture.test.ts enforces them (config.ts, observability and
 * upstream are the services between the providers and the store). An edge to a higher layer is marked `(up)`.
 */
const LAYERS = ["core", "cache", "providers", "observability", "upstream", "config.ts", "store", "engine", "http", "index.ts"];

/** Every .ts file under src/, as a path relative to src/. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [relative(SRC, path)] : [];
  });
}

/** The unit a file belongs to: its top folder, or under providers/ and store/ its subfolder (the files beside them: `providers/*.ts`). */
function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 1) return file;
  if (["providers", "store"].includes(parts[0])) return parts.length > 2 ? `${parts[0]}/${parts[1]}` : `${parts[0]}/*.ts`;
  return parts[0];
}

function resolveImport(files: Set<string>, from: string, specifier: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  const base = parts.join("/");
  return files.has(`${base}.ts`) ? `${base}.ts` : `${base}/index.ts`;
}

/** The folder-level graph: for each unit, the units it imports, each with its number of import lines and whether all are type-only. */
export function graph(): Map<string, Map<string, { lines: number; typeOnly: boolean }>> {
  const files = sources().sort();
  const known = new Set(files);
  const out = new Map<string, Map<string, { lines: number; typeOnly: boolean }>>();
  for (const file of files) {
    const from = unitOf(file);
    if (!out.has(from)) out.set(from, new Map());
    const text = readFileSync(join(SRC, file), "utf8");
    for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)";/gms)) {
      const to = unitOf(resolveImport(known, file, m[2]));
      if (to === from) continue;
      const edges = out.get(from)!;
      const edge = edges.get(to) ?? { lines: 0, typeOnly: true };
      edges.set(to, { lines: edge.lines + 1, typeOnly: edge.typeOnly && Boolean(m[1]) });
    }
  }
  return out;
}

const layerOf = (unit: string) => LAYERS.findIndex((layer) => unit === layer || unit.startsWith(`${layer}/`));
const byLayer = (a: string, b: string) => layerOf(a) - layerOf(b) || a.localeCompare(b);

/** The Markdown block: one line per unit, lowest layer first, with what it imports. */
export function block(): string {
  const g = graph();
  const lines = [...g.keys()].sort(byLayer).map((unit) => {
    const targets = [...g.get(unit)!.entries()].sort(([a], [b]) => byLayer(a, b));
    const list = targets.map(([to, e]) => `${to}${e.typeOnly ? " (types)" : ""}${layerOf(to) > layerOf(unit) ? " (up)" : ""}`).join(", ");
    return `${unit.padEnd(24)} -> ${list || "(nothing in src/)"}`;
  });
  return [BEGIN, "```", ...lines, "```", END].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = block();
  const doc = readFileSync(DOC, "utf8");
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (process.argv.includes("--write") || process.argv.includes("--check")) {
    if (start < 0 || end < start) throw new Error(`docs/architecture.md has no ${BEGIN} … ${END} block`);
    const next = doc.slice(0, start) + text + doc.slice(end + END.length);
    if (process.argv.includes("--check")) {
      if (next !== doc) {
        console.error("docs/architecture.md's import graph differs from src/: run npm run arch:graph -- --write");
        process.exit(1);
      }
      console.log("docs/architecture.md's import graph matches src/");
    } else {
      writeFileSync(DOC, next);
      console.log("wrote the import graph into docs/architecture.md");
    }
  } else console.log(text);
}
