import type { Rendered } from "../cache/provider";
import { CACHE_HEADER } from "./outcome";

/** A hit's response: the rendered answer, `muscle-mem-cache: hit` and the caller's headers. */
export function serveRendered(rendered: Rendered, stream: boolean, headers: Record<string, string>): Response {
  const base: Record<string, string> = { [CACHE_HEADER]: "hit", ...headers, "content-type": rendered.contentType };
  if (stream) base["cache-control"] = "no-cache";
  return new Response(rendered.body, { headers: base });
}
