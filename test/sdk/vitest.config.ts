import { defineConfig } from "vitest/config";
import { tc39Decorators } from "./tc39-decorators.js";

// Runs the SDK tests on their own: npx vitest run -c test/sdk/vitest.config.ts
export default defineConfig({
  root: new URL("../..", import.meta.url).pathname,
  plugins: [tc39Decorators()],
  test: {
    include: ["test/sdk/**/*.test.ts"],
    environment: "node",
    testTimeout: 20_000,
  },
});
