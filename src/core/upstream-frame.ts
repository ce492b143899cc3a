import { GATEWAY_KEY, gatewayRoutesOf } from "./gateways";
import { digest } from "./hash";

/**
 * What the upstream reads besides the body and the credential: a few headers
 * and the query string. Each joins the frame, so that two requests the
 * upstream could answer differently never share a tree (docs/reliability.md,
 * "What is in the key").
 */

/** The request as a live route sees it; absent when keying an imported trajectory line. */
export interface UpstreamContext {
  url?: URL;
  headers?: Headers;
  /** The body's text, whose number spellings JSON.parse loses (src/core/number-text.ts). */
  raw?: string;
  /**
   * The upstream the route sends to, when it is not its API's own (`GEMINI_BASE_URL/v1beta/openai`: Gemini's
   * OpenAI-compatible endpoint under chat's adapter): keyed as UPSTREAM_KEY, so that one body sent to two
   * upstreams never shares a tree. Absent on the API's own route (the frames recorded before it stay as they were).
   */
  upstream?: string;
}

/** The frame key of a route's own upstream (UpstreamContext's `upstream`); a live body field of this name is bypassed. */
export const UPSTREAM_KEY = "muscle-mem:upstream";

/**
 * The frame key of the query string: its parameters in order, each as its name and a digest of the
 * parameter as sent (percent-encoding kept). The frame is stored and shown: a value could be a
 * credential under a name we do not know, and a raw key is never stored.
 */
export const QUERY_KEY = "muscle-mem:query";

/**
 * Headers that choose whose account, project or beta features answer an
 * OpenAI request (chat and Responses), and Azure's that change what answers or
 * what the model reads: Azure OpenAI's content filter configuration chosen per
 * request (`x-policy-id`), the Azure AI model inference API's handling of body
 * parameters it does not define (`extra-parameters`: passed to the model,
 * dropped or refused) and an Azure ML endpoint's deployment
 * (`azureml-model-deployment`). They join the frame under their own (lower-case) names.
 */
export const OPENAI_FRAME_HEADERS = [
  "openai-organization",
  "openai-project",
  "openai-beta",
  "x-policy-id",
  "extra-parameters",
  "azureml-model-deployment",
] as const;

/** Query parameters never keyed: `key` is a credential, already the tenant (src/core/credential.ts). */
const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set(["key"]);

const NONE: ReadonlySet<string> = new Set();

/**
 * The frame entries of a request's headers `names` (those it sends), of
 * its query string (every parameter but the credential and `transport`, in
 * the order sent) and of the AI gateway routing headers it sends
 * (src/core/gateways.ts): `{}` for a request with none.
 *
 * @example upstreamFrameOf({ url: new URL("http://w/v1/chat/completions?api-version=1") }, []) // { "muscle-mem:query": ["api-version#<digest>"] }
 */
export function upstreamFrameOf(
  context: UpstreamContext | undefined,
  names: readonly string[],
  transport: ReadonlySet<string> = NONE,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (context?.upstream) out[UPSTREAM_KEY] = context.upstream;
  for (const name of names) {
    const value = context?.headers?.get(name);
    if (value) out[name] = value;
  }
  const query: string[] = [];
  for (const pair of (context?.url?.search ?? "").slice(1).split("&")) {
    if (pair === "") continue;
    // Named as the upstream decodes it (`%6Bey` is `key`); keyed as sent, so that two values that decode alike
    // (`%FF` and `%FE` both to U+FFFD) stay apart.
    const name = new URLSearchParams(pair).keys().next().value ?? "";
    if (!CREDENTIAL_PARAMS.has(name) && !transport.has(name)) query.push(`${name.slice(0, 64)}#${digest(`query\u0000${pair}`)}`);
  }
  if (query.length > 0) out[QUERY_KEY] = query;
  const routes = gatewayRoutesOf(context?.headers);
  if (routes.length > 0) out[GATEWAY_KEY] = routes;
  return out;
}

/**
 * Why a live request's body cannot be keyed (null when it can): a body field
 * spelled like a frame entry that comes from elsewhere (`muscle-mem:…`, a
 * frame header's name) would key the same tree as the request that sends the
 * header or query, although the upstream reads (and rejects) the field.
 * Imported lines carry these entries in their body on purpose: they pass no
 * context and are not checked.
 */
export function reservedFieldOf(body: object, context: UpstreamContext | undefined, names: readonly string[]): string | null {
  if (!context) return null;
  for (const key of Object.keys(body)) if (key.startsWith("muscle-mem:") || names.includes(key)) return "reserved body field";
  return null;
}
