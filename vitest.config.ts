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
const migrations = await readD1Migrations("./migrations");

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: migrations,
                UPSTREAM_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
                ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
                UPSTREAM_TEST_URL: `http://127.0.0.1:${upstreamPort}`,
                ADMIN_TOKEN: "test-admin-token",
                COUNTER_FLUSH_MS: "0",
                HOT_CACHE_TTL_MS: "200",
              },
            },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/unit/**/*.test.ts", "test/worker/**/*.test.ts"],
          setupFiles: ["./test/worker/apply-migrations.ts"],
          globalSetup: ["./test/global-setup.ts"],
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
          fileParallelism: false,
        },
      },
    ],
  },
});
