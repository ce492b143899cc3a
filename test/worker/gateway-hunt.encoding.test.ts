import { describe, expect, it } from "vitest";
import { callWorker, chatRequest, faultBase } from "./faults.support";
import { uniqueModel } from "./helpers";

/**
 * The upstream's `content-encoding` (tools/fault-upstream.ts `<encoding>-<json|sse>`, over a real connection, so the
 * runtime's fetch decodes what it decodes): the client gets a body its headers describe, and only a body the
 * Worker read decoded is recorded.
 */

/** Asks twice through the fault upstream `kind`: what the client got the first time and the second's outcome. */
async function twice(kind: string, stream: boolean) {
  const { base } = faultBase(kind);
  const model = uniqueModel("enc");
  const body = { model, messages: [{ role: "user", content: "Refund order A-1." }], ...(stream ? { stream: true } : {}) };
  const ask = async () => {
    const call = await callWorker(chatRequest(body, { key: `sk-enc-${model}` }), { UPSTREAM_BASE_URL: base });
    const bytes = new Uint8Array(await call.res.arrayBuffer());
    await call.settled();
    return { res: call.res, bytes };
  };
  const first = await ask();
  const second = await ask();
  return { first, second: second.res.headers.get("muscle-mem-cache") };
}

/** `bytes` decoded from `format` (what a client that reads the header does). */
async function decoded(bytes: Uint8Array<ArrayBuffer>, format: CompressionFormat): Promise<string> {
  return new Response(new Response(bytes).body?.pipeThrough(new DecompressionStream(format))).text();
}

describe("an upstream body in a content-encoding", () => {
  for (const encoding of ["gzip", "br"]) {
    for (const stream of [false, true]) {
      it(`Should relay a ${encoding} ${stream ? "stream" : "JSON answer"} decoded, without the header, and record it`, async () => {
        const { first, second } = await twice(`${encoding}-${stream ? "sse" : "json"}`, stream);
        expect(first.res.headers.get("content-encoding")).toBeNull();
        expect(new TextDecoder().decode(first.bytes)).toContain(`Encoded ${encoding}.`);
        expect(second).toBe("hit");
      });
    }
  }

  for (const stream of [false, true]) {
    it(`Should relay a deflate ${stream ? "stream" : "JSON answer"} (which the runtime does not decode) with its header, and record nothing`, async () => {
      const { first, second } = await twice(`deflate-${stream ? "sse" : "json"}`, stream);
      expect(first.res.headers.get("content-encoding")).toBe("deflate");
      expect(await decoded(first.bytes as Uint8Array<ArrayBuffer>, "deflate")).toContain("Encoded deflate.");
      expect(second).toBe("miss");
    });

    it(`Should relay a ${stream ? "stream" : "JSON answer"} in an unknown encoding as sent, with its header, and record nothing`, async () => {
      const { first, second } = await twice(`x-custom-${stream ? "sse" : "json"}`, stream);
      expect(first.res.headers.get("content-encoding")).toBe("x-custom");
      expect(new TextDecoder().decode(first.bytes)).toContain("Encoded x-custom.");
      expect(second).toBe("miss");
    });
  }
});
