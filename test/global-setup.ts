import { startTestUpstream } from "../tools/test-upstream";

/** Starts the scripted upstream on the port vitest.config.ts chose, for the Workers project. */
export default async function setup(): Promise<() => Promise<void>> {
  const upstream = await startTestUpstream(Number(process.env.MM_TEST_UPSTREAM_PORT));
  return () => upstream.close();
}
