/**
 * The muscle-mem SDK's "putting it all together" example.
 *
 *   npx tsx examples/sdk-greeter.ts
 *
 * With a Worker running (`npm start`), share the recordings through it:
 *
 *   MUSCLE_MEM_URL=http://127.0.0.1:8787 MUSCLE_MEM_TOKEN=sk-your-team-key npx tsx examples/sdk-greeter.ts
 *
 * (With the admin token, also set MUSCLE_MEM_TENANT to the tenant id to record as: the admin is not a tenant.)
 */
import { Check, Engine, MemoryStore, RemoteStore } from "../sdk/src/index.js";

const url = process.env.MUSCLE_MEM_URL;
const store = url
  ? new RemoteStore({
      baseUrl: url,
      namespace: "sdk-greeter",
      token: process.env.MUSCLE_MEM_TOKEN ?? "sk-sdk-greeter",
      tenant: process.env.MUSCLE_MEM_TENANT || undefined,
    })
  : new MemoryStore();
const engine = new Engine({ store });

// our "environment" features, stored with each step
interface T {
  name: string;
  time: number;
}

// our capture implementation, taking the tool's arguments and returning T
const capture = (name: string): T => ({ name, time: Date.now() });

// our compare implementation: the cache is valid if it was recorded within the last second
const compare = (current: T, candidate: T): boolean => current.time - candidate.time <= 1000;

// instrument our tool with a pre-check
const hello = engine.function({ name: "hello", preCheck: new Check(capture, compare) }, (name: string) => {
  console.log(`  hello ${name}`);
});

// pretend this is your agent
const agent = (name: string) => {
  console.log("  (agent running)");
  for (let i = 0; i < 9; i++) hello(`${name} + ${i}`);
};

engine.setAgent(agent).finalize();

console.log("run once: expect a miss");
console.log("  cache hit:", await engine("erik"));

console.log("run again: expect a hit");
console.log("  cache hit:", await engine("erik"));

console.log("wait past the 1-second TTL: expect a miss");
await new Promise((resolve) => setTimeout(resolve, 1100));
console.log("  cache hit:", await engine("erik"));
