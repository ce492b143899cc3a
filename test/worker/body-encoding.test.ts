import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { callWorker, chatRequest, storedFor } from "./faults.support";
import { generations, recorded, uniqueModel } from "./helpers";

/**
 * A client that compresses its request body (`Content-Encoding: gzip` or
 * `deflate`) is keyed by the JSON it sent, not refused: the Worker decodes the
 * body, keys it, and sends the upstream the decoded JSON without the header.
 */

async function compressed(text: string, format: CompressionFormat): Promise<ArrayBuffer> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream(format));
  return new Response(stream).arrayBuffer();
}

function post(body: BodyInit, encoding: string | null, key = "sk-body-encoding"): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${key}` };
  if (encoding !== null) headers["content-encoding"] = encoding;
  return exports.default.fetch(new Request("http://mm.test/v1/chat/completions", { method: "POST", headers, body }));
}

interface Completion {
  choices: Array<{ message: { content: string } }>;
}

describe("request bodies with a Content-Encoding", () => {
  for (const format of ["gzip", "deflate"] as const) {
    it(`Should key a ${format} body as the JSON it holds and send the upstream that JSON`, async () => {
      const model = uniqueModel("echo");
      const body = { model, messages: [{ role: "user", content: `zipped ${format}` }] };
      const real = globalThis.fetch;
      const sent: Array<{ encoding: string | null; body: string }> = [];
      const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
        if (String(input).endsWith("/chat/completions")) sent.push({ encoding: new Headers(init?.headers).get("content-encoding"), body: String(init?.body) });
        return real(input, init);
      });
      const first = await post(await compressed(JSON.stringify(body), format), format).finally(() => spy.mockRestore());
      expect(sent).toEqual([{ encoding: null, body: JSON.stringify(body) }]);
      expect(first.status).toBe(200);
      expect(first.headers.get("muscle-mem-cache")).toBe("miss");
      expect(((await first.json()) as Completion).choices[0].message.content).toBe(`echo: zipped ${format}`);
      await recorded(body, { key: "sk-body-encoding" });
      // The same JSON, sent plain or compressed again, is the same request.
      const plain = await post(JSON.stringify(body), null);
      expect(plain.headers.get("muscle-mem-cache")).toBe("hit");
      await plain.arrayBuffer();
      const again = await post(await compressed(JSON.stringify(body), format), format.toUpperCase());
      expect(again.headers.get("muscle-mem-cache")).toBe("hit");
      await again.arrayBuffer();
      expect(await generations(model)).toBe(1);
    });
  }

  it("Should answer 400 in the envelope for a body that is not the encoding it names, and store nothing", async () => {
    const model = uniqueModel("echo");
    const res = await post(JSON.stringify({ model, messages: [{ role: "user", content: "not zipped" }] }), "gzip");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    expect(await storedFor(model)).toEqual({ trees: 0, nodes: 0 });
  });

  it("Should answer 415 in the envelope for an encoding it cannot decode", async () => {
    const res = await post(JSON.stringify({ model: uniqueModel("echo"), messages: [{ role: "user", content: "br" }] }), "br");
    expect(res.status).toBe(415);
    const error = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("unsupported_media_type");
    expect(error.message).toContain("br");
  });

  it("Should count MAX_BODY_BYTES on the decoded body (413), whatever the compressed size", async () => {
    const text = JSON.stringify({ model: uniqueModel("echo"), messages: [{ role: "user", content: " ".repeat(4096) }] });
    const request = chatRequest("", { headers: { "content-encoding": "gzip" } });
    const zipped = new Request(request, { body: await compressed(text, "gzip") });
    const { res } = await callWorker(zipped, { MAX_BODY_BYTES: "2048" } as Record<string, string>);
    expect(res.status).toBe(413);
    await res.arrayBuffer();
  });
});
