/**
 * The bench's relay floor: a bare Worker that forwards the request to
 * `UPSTREAM_BASE_URL` (the path after `/v1`) and returns the upstream's
 * response as it comes, streamed or not. What a miss is compared with.
 */
interface Env {
  UPSTREAM_BASE_URL: string;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return new Response("ok");
    const target = `${env.UPSTREAM_BASE_URL}${url.pathname.replace(/^\/v1/, "")}${url.search}`;
    const upstream = await fetch(target, { method: request.method, headers: request.headers, body: request.body });
    return new Response(upstream.body, upstream);
  },
} satisfies ExportedHandler<Env>;
