import type { Context, Next } from "hono";
import { configOf } from "../../config";
import { relayTo } from "../passthrough";

/**
 * Sends the Anthropic SDK's other calls (`/v1/messages/count_tokens`,
 * `/v1/messages/batches`, `/v1/models`, …) to `ANTHROPIC_BASE_URL` unchanged:
 * a request is Anthropic's when it carries `anthropic-version`. Everything else
 * continues to the OpenAI pass-through.
 */
export async function anthropicPassThrough(c: Context<{ Bindings: Env }>, next: Next): Promise<Response | void> {
  if (!c.req.raw.headers.has("anthropic-version")) return next();
  return relayTo(c, configOf(c.env).anthropicBaseUrl, "ANTHROPIC_BASE_URL");
}
