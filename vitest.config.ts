import { createServer } from "node:net";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { tc39Decorators } from "./test/sdk/tc39-decorators";

/** A free loopback port for the scripted upstream that test/global-setup.ts starts. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const upstreamPort = Number(process.env.MM_TEST_UPSTREAM_PORT) || (await freePort());
process.env.MM_TEST_UPSTREAM_PORT = String(upstreamPort);
const geminiPort = Number(process.env.MM_TEST_GEMINI_PORT) || (await freePort());
process.env.MM_TEST_GEMINI_PORT = String(geminiPort);
const migrations = await readD1Migrations("./migrations");

/**
 * The Worker and unit projects' time limits: `npm test` runs them beside each other and the node project
 * (test/support/run-tests.ts), so on a 2-core machine a file shares the CPU with workerd, wrangler dev and
 * Chromium. vitest's 5 s / 10 s limits would then fail a test for being slow, not wrong; these only stop a test
 * that hangs.
 */
const workerTimeouts = { testTimeout: 30_000, hookTimeout: 60_000 };

/** The vars both Worker projects run with: the scripted upstream, an admin token, immediate counter flushes. */
const workerBindings = {
  TEST_MIGRATIONS: migrations,
  UPSTREAM_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
  ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
  UPSTREAM_TEST_URL: `http://127.0.0.1:${upstreamPort}`,
  GEMINI_BASE_URL: `http://127.0.0.1:${geminiPort}`,
  ADMIN_TOKEN: "test-admin-token",
  COUNTER_FLUSH_MS: "0",
  // Each tree's HitTally writes every batch at once in tests (test/worker/hit-tally.test.ts sets its own interval).
  TALLY_FLUSH_MS: "0",
  HOT_CACHE_TTL_MS: "200",
  // The per-colo layer's bound equals the isolate's in tests, so that one wait covers both (test/worker/colo-cache.test.ts).
  COLO_CACHE_TTL_MS: "200",
};

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: workerBindings,
            },
          }),
        ],
        test: {
          name: "workers",
          ...workerTimeouts,
          include: ["test/worker/**/*.test.ts"],
          setupFiles: ["./test/worker/apply-migrations.ts"],
          globalSetup: ["./test/global-setup.ts", "./test/gemini-setup.ts"],
        },
      },
      {
        // The same Worker over four D1 shards with read replication on (src/store/shards/shards.ts): every route
        // must find each tree in its own shard. The scripted upstream is the workers project's (same port).
        plugins: [
          cloudflareTest({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              d1Databases: { DB: "shard-0", DB_1: "shard-1", DB_2: "shard-2", DB_3: "shard-3" },
              bindings: { ...workerBindings, D1_SHARDS: "DB,DB_1,DB_2,DB_3", D1_READ_REPLICATION: "on" },
            },
          }),
        ],
        test: {
          name: "sharded",
          ...workerTimeouts,
          include: ["test/sharded/**/*.test.ts"],
          setupFiles: ["./test/sharded/apply-migrations.ts"],
          globalSetup: ["./test/global-setup.ts", "./test/gemini-setup.ts"],
        },
      },
      {
        // The pure unit tests (src/core, src/cache, the providers' keying, the engine's in-memory parts): nothing
        // in them needs workerd (no `cloudflare:*` import, no `env`, no SELF), so they run in Node's worker
        // threads, which start a file in milliseconds where the Workers pool spends ~1.9 s starting a runtime.
        // Each file still gets its own module graph (vitest's isolation), so a module-level memo starts fresh.
        // test/worker is where a test that needs the Workers runtime belongs.
        test: {
          name: "unit",
          environment: "node",
          pool: "threads",
          ...workerTimeouts,
          include: ["test/unit/**/*.test.ts"],
        },
      },
      {
        // The SDK's tests use TC39 standard decorators, which vite's own TypeScript transform does not lower.
        plugins: [tc39Decorators()],
        test: {
          name: "node",
          environment: "node",
          include: ["test/e2e/**/*.test.ts", "test/sdk/**/*.test.ts", "test/browser/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // One file at a time: each starts wrangler dev (and Chromium), heavy on a small machine. `npm test`
          // runs this project beside the Worker projects, in a vitest of its own (test/support/run-tests.ts).
          fileParallelism: false,
        },
      },
    ],
  },
});
