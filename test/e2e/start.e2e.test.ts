import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summary } from "../../scripts/migrate";
import { banner, flagValue, varOverrides } from "../../scripts/start";
import { freePort } from "../support/wrangler-dev";

const ROOT = resolve(import.meta.dirname, "../..");

describe("npm start's argument handling and banner (scripts/start.ts)", () => {
  it("Should read --name VALUE and --name=VALUE as wrangler does, and every --var", () => {
    const args = ["--port", "9000", "--ip=127.0.0.1", "--var", "UPSTREAM_BASE_URL:http://127.0.0.1:9911/v1", "--var=X:a:b"];
    expect(flagValue(args, "--port")).toBe("9000");
    expect(flagValue(args, "--ip")).toBe("127.0.0.1");
    expect(flagValue(args, "--persist-to")).toBeUndefined();
    expect(varOverrides(args)).toEqual({ UPSTREAM_BASE_URL: "http://127.0.0.1:9911/v1", X: "a:b" });
  });

  it("Should name the proxy, the dashboard, the dev admin token and where misses go", () => {
    const text = banner("http://localhost:9000", ["--var", "UPSTREAM_BASE_URL:http://127.0.0.1:9911/v1"], "4.86.0");
    expect(text).toContain("http://localhost:9000/v1");
    expect(text).toContain("dashboard         http://localhost:9000/");
    expect(text).toContain("dev-admin-token");
    expect(text).toContain("misses go to http://127.0.0.1:9911/v1");
    expect(text).toContain("npm run traffic");
    expect(banner("http://localhost:8787", [], "4.86.0")).toContain("misses go to https://api.openai.com/v1");
    expect(banner("http://localhost:8787", ["--var", "ADMIN_TOKEN:s3cret-real-one"], "4.86.0")).not.toContain("s3cret-real-one");
  });

  it("Should sum up a local migration in one line", () => {
    expect(
      summary("Migrations to be applied:\n│ 0000_init.sql │\n│ 0000_init.sql │ ✅ │\n│ 0001_t.sql │ 🕒️ │\n│ 0000_init.sql │ ✅ │\n│ 0001_t.sql │ ✅ │"),
    ).toBe("applied 0000_init.sql, 0001_t.sql");
    expect(summary("✅ No migrations to apply!")).toBe("up to date");
  });
});

describe("npm start against wrangler dev (offline)", () => {
  let child: ChildProcess;
  let state: string;
  let output = "";
  let port: number;

  beforeAll(async () => {
    state = mkdtempSync(join(tmpdir(), "mm-start-"));
    port = await freePort();
    const env = { ...process.env, XDG_CONFIG_HOME: join(state, "config"), WRANGLER_LOG_PATH: join(state, "logs") };
    child = spawn(
      join(ROOT, "node_modules/.bin/tsx"),
      ["scripts/start.ts", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", join(state, "d"), "--var", "UPSTREAM_BASE_URL:http://127.0.0.1:9/v1"],
      { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 120_000;
    while (!output.includes("admin token") && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 250));
    await new Promise((r) => setTimeout(r, 1000));
  }, 150_000);

  afterAll(async () => {
    if (child?.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    rmSync(state, { recursive: true, force: true });
  });

  it("Should migrate in one line, pass the arguments through, and print the banner once with no offline noise", async () => {
    expect(output).toContain(`migrate: DB (local, ${join(state, "d")}): applied 0000_init.sql`);
    expect(output).not.toContain("Migrations to be applied");
    expect(output.match(/muscle-mem is running/g)).toHaveLength(1);
    expect(output).toContain(`OpenAI base URL   http://127.0.0.1:${port}/v1   misses go to http://127.0.0.1:9/v1`);
    expect(output).toContain("admin token       dev-admin-token");
    expect(output).not.toContain("ENOTFOUND");
    expect(output).not.toContain("update available");
    const res = await fetch(`http://127.0.0.1:${port}/api/trees`, { headers: { authorization: "Bearer dev-admin-token" } });
    expect(res.status).toBe(200);
  });
});
