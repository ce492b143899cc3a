import { startTestUpstream } from "../tools/test-upstream";

/**
 * Starts the scripted upstream on the port vitest.config.ts chose, once for
 * both Worker projects (each project runs its global setup; the second finds
 * the port taken by the first and shares it).
 */
export default async function setup(): Promise<() => Promise<void>> {
  try {
    const upstream = await startTestUpstream(Number(process.env.MM_TEST_UPSTREAM_PORT));
    return () => upstream.close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") return async () => undefined;
    throw error;
  }
}
