// Vendors d3-hierarchy (ESM) from node_modules into the static assets: `npm run build:dashboard`.
// The copy is committed, so `npm start` and `wrangler deploy` need no build step;
// test/browser checks that it matches the pinned package.
import { copyFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "../node_modules/d3-hierarchy");
copyFileSync(join(pkg, "dist/d3-hierarchy.min.mjs"), join(here, "vendor/d3-hierarchy.mjs"));
copyFileSync(join(pkg, "LICENSE"), join(here, "vendor/d3-hierarchy.LICENSE"));
console.log("dashboard/vendor/d3-hierarchy.mjs updated");
