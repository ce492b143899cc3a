import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/tree/schema.ts",
  out: "./migrations",
});
