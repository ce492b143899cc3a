import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eventually, uniqueModel } from "./helpers";
import { completion, withUpstream } from "./upstream-stub";

/** A chat request whose body is sent as given: bytes with a declared length, or a stream (chunked, no length). */
function post(body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", authorization: "Bearer sk-framing" };
  if (body instanceof Uint8Array) headers["content-length"] = String(body.byteLength);
  return exports.default.fetch(new Request("http://mm.test/v1/chat/completions", { method: "POST", headers, body }));
}

function chunked(bytes: Uint8Array<ArrayBuffer>, chunkSize: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

const utf8 = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe("request body framing", () => {
  it("Should answer 400 for bad UTF-8 in a body of declared length, and in a chunked one", async () => {
    const bad: Uint8Array<ArrayBuffer> = new Uint8Array([...utf8('{"model":"m","messages":[{"role":"user","content":"'), 0xff, 0xfe, ...utf8('"}]}')]);
    const declared = await post(bad);
    expect(declared.status).toBe(400);
    expect(await errorCode(declared)).toBe("invalid_json");
    const streamed = await post(chunked(bad, 7));
    expect(streamed.status).toBe(400);
    expect(await errorCode(streamed)).toBe("invalid_json");
  });

  it("Should take a body that holds U+FFFD as sent (valid UTF-8), and key it apart from one without", async () => {
    const model = uniqueModel("framing-fffd");
    await withUpstream({ json: completion({ role: "assistant", content: "ok" }) }, async () => {
      const replacement = await post(utf8(JSON.stringify({ model, messages: [{ role: "user", content: "bad byte: \uFFFD" }] })));
      expect(replacement.status).toBe(200);
      expect(replacement.headers.get("muscle-mem-cache")).toBe("miss");
      await replacement.text();
      const plain = await post(utf8(JSON.stringify({ model, messages: [{ role: "user", content: "bad byte: ?" }] })));
      expect(plain.headers.get("muscle-mem-cache")).toBe("miss");
      await plain.text();
    });
  });

  it("Should answer 413 for a chunked body over MAX_BODY_BYTES", async () => {
    const huge = utf8(JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(Number(env.MAX_BODY_BYTES) + 10) }] }));
    const res = await post(chunked(huge, 64 * 1024));
    expect(res.status).toBe(413);
    expect(await errorCode(res)).toBe("body_too_large");
  });

  it("Should key a chunked body like the same body of declared length (a multi-byte character split across chunks)", async () => {
    const model = uniqueModel("framing");
    await withUpstream({ json: completion({ role: "assistant", content: "Bonjour, ça va ?" }) }, async () => {
      const text = JSON.stringify({ model, messages: [{ role: "user", content: "Ünïcödé: 東京 ✓" }] });
      const first = await post(utf8(text));
      expect(first.headers.get("muscle-mem-cache")).toBe("miss");
      await first.text();
      let again = new Response();
      await eventually(async () => {
        again = await post(chunked(utf8(text), 5));
        return again.headers.get("muscle-mem-cache") === "hit" || (await again.text(), false);
      });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe("Bonjour, ça va ?");
    });
  });
});
