import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { WranglerDev } from "../test/support/wrangler-dev";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
// D1 caps one statement at 100 KB.
const ROWS_PER_INSERT = 200;

/** Short but real-looking message texts for synthetic nodes. */
const TEXTS = [
  '{"content":"I would like to change my flight to the next day, same route, economy.","name":"bench-synthetic","role":"user"}',
  '{"content":"I would like to change my flight to the next day, same route, economy.","role":"user"}',
  '{"content":"{\\"reservation_id\\":\\"4WQ150\\",\\"status\\":\\"active\\",\\"cabin\\":\\"economy\\"}","role":"tool","tool_call_id":"call_1"}',
  '{"role":"assistant","tool_calls":[{"function":{"arguments":"{\\"user_id\\":\\"mia_li_3668\\"}","name":"get_user_details"},"id":"call_0","type":"function"}]}',
  '{"content":"Your reservation has been updated. Is there anything else I can help with?","role":"assistant"}',
];

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * Grows tree `treeId` to `target` nodes in the local D1 with direct SQL
 * inserts (`wrangler d1 execute --file`, into the running dev server's
 * state). New nodes hang under random existing nodes of the tree, so the
 * tree branches like real traffic. Hash strings have the shape of real ones.
 */
export async function growTree(dev: WranglerDev, config: string, treeId: string, target: number): Promise<number> {
  const [{ n, len }] = await dev.sql(`SELECT COUNT(*) AS n, MAX(length(hash)) AS len FROM nodes WHERE tree_id = '${treeId}'`);
  const hashLength = Number(len) || 32;
  // Synthetic nodes grow from the root under synthetic parents only, so that no
  // recorded request gains a second answer (which the policy would refuse to serve).
  const synthetic = (await dev.sql(`SELECT hash, depth FROM nodes WHERE tree_id = '${treeId}' AND message LIKE '%"bench-synthetic"%' LIMIT 20000`)) as Array<{
    hash: string;
    depth: number;
  }>;
  const parents = [{ hash: treeId, depth: 0 }, ...synthetic.map((r) => ({ hash: r.hash, depth: Number(r.depth) }))];
  const missing = target - Number(n);
  if (missing <= 0) return Number(n);
  const now = Date.now();
  const statements: string[] = [];
  let values: string[] = [];
  for (let i = 0; i < missing; i++) {
    const parent = parents[Math.floor(Math.random() * parents.length)];
    const hash = randomBytes(hashLength).toString("hex").slice(0, hashLength);
    const depth = parent.depth + 1;
    const text = TEXTS[i % TEXTS.length];
    const role = (JSON.parse(text) as { role: string }).role;
    const observations = role === "assistant" ? 1 : 0;
    values.push(`(${sqlString(hash)},${sqlString(parent.hash)},${sqlString(treeId)},${depth},'${role}',${sqlString(text)},${observations},${now})`);
    if (parents.length < 50_000) parents.push({ hash, depth });
    if (values.length === ROWS_PER_INSERT) {
      statements.push(`INSERT INTO nodes (hash,parent,tree_id,depth,role,message,observations,created_at) VALUES ${values.join(",")};`);
      values = [];
    }
  }
  if (values.length) statements.push(`INSERT INTO nodes (hash,parent,tree_id,depth,role,message,observations,created_at) VALUES ${values.join(",")};`);
  statements.push(`UPDATE trees SET node_count = node_count + ${missing} WHERE id = ${sqlString(treeId)};`);
  const file = join(dev.stateDir, `grow-${target}.sql`);
  writeFileSync(file, statements.join("\n"));
  await executeSqlFile(dev, config, file);
  const [{ total }] = await dev.sql("SELECT COUNT(*) AS total FROM nodes");
  return Number(total);
}

/** Runs a file of SQL statements against the dev server's local D1 (`wrangler d1 execute --file`). */
export async function executeSqlFile(dev: WranglerDev, config: string, file: string): Promise<void> {
  const env = {
    ...process.env,
    CI: "true",
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_LOG_PATH: join(dev.stateDir, "logs"),
    XDG_CONFIG_HOME: join(dev.stateDir, "config"),
  };
  await run(
    join(ROOT, "node_modules/.bin/wrangler"),
    ["d1", "execute", "DB", "--local", "--config", config, "--persist-to", dev.stateDir, "--file", file, "--yes"],
    { cwd: ROOT, env, maxBuffer: 256 * 1024 * 1024 },
  );
}
