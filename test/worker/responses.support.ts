import { exports } from "cloudflare:workers";
import { eventually } from "./helpers";

/** POSTs a Responses body to the Worker with a key (or none) and extra headers. */
export function responses(body: unknown, init: { key?: string | null; headers?: Record<string, string> } = {}): Promise<Response> {
  const auth: Record<string, string> = init.key === null ? {} : { authorization: `Bearer ${init.key ?? "sk-resp-default"}` };
  return exports.default.fetch(
    new Request("http://mm.test/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", ...auth, ...init.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** Waits until the Worker has recorded an answer for the body (only-if-cached answers 200). */
export async function recordedResponse(body: unknown, init: { key?: string; headers?: Record<string, string> } = {}): Promise<void> {
  await eventually(async () => {
    const res = await responses(body, { ...init, headers: { ...init.headers, "cache-control": "only-if-cached" } });
    await res.arrayBuffer();
    return res.status === 200;
  });
}

/** The `data:` objects of an event stream, in order. */
export function eventsOf(text: string): Array<{ type: string; [k: string]: unknown }> {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as { type: string });
}
