import { env } from "cloudflare:workers";
import { afterEach, beforeEach, vi } from "vitest";

type Item = Record<string, unknown>;

/**
 * A scripted Responses upstream for one test file's Worker tests: every `POST …/responses` to UPSTREAM_BASE_URL's
 * origin is answered by `answer(body, n)` (`n`: this request's number in the test, from 1), either output items or a
 * string (a 400 `invalid_request_error` with that message), as JSON or, for a streamed request, as
 * `response.created` then `response.completed` events; every other fetch goes through. `envelope` adds fields to
 * the response object (its `id` among them; default `resp_up<n>`). Registers its own beforeEach/afterEach;
 * `asked` holds the bodies of the current test, in order.
 */
export function scriptedResponses<B extends Item>(
  answer: (body: B, n: number) => Item[] | string,
  envelope: (body: B, n: number) => Item = (_body, n) => ({ id: `resp_up${n}` }),
): { asked: B[] } {
  const stub = { asked: [] as B[] };
  beforeEach(() => {
    stub.asked = [];
    const upstream = new URL((env as unknown as { UPSTREAM_BASE_URL: string }).UPSTREAM_BASE_URL).origin;
    const real = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (new URL(request.url).origin !== upstream || !request.url.endsWith("/responses")) return real(input, init);
      const body = (await request.json()) as B;
      stub.asked.push(body);
      const output = answer(body, stub.asked.length);
      if (typeof output === "string")
        return Response.json({ error: { message: output, type: "invalid_request_error", param: null, code: null } }, { status: 400 });
      const response = {
        object: "response",
        status: "completed",
        model: body.model,
        output,
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
        ...envelope(body, stub.asked.length),
      };
      if (!body.stream) return Response.json(response);
      const events = [
        { type: "response.created", response: { ...response, status: "in_progress", output: [] } },
        { type: "response.completed", response },
      ];
      return new Response(events.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join(""), {
        headers: { "content-type": "text/event-stream" },
      });
    });
  });
  afterEach(() => vi.restoreAllMocks());
  return stub;
}
