import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { withGeminiUpstream } from "./gemini.support";

/**
 * google-genai (Python 2.25.0) calls outside `/v1beta/models/…`, with the path, headers and body it sends.
 *
 * With `http_options=HttpOptions(api_version="v1alpha")` (Google's preview
 * version, which some features need) posts to `/v1alpha/models/{model}:generateContent`. Before, the Worker
 * had no such route and answered its own 404 ("No such route."): the agent broke on a call the model
 * would have answered. It is relayed to `GEMINI_BASE_URL` unchanged and not cached (`bypass`).
 */
const BODY = `{"contents": [{"parts": [{"text": "Please refund order #V-3."}], "role": "user"}], "generationConfig": {}}`;

function post(path: string, headers: Record<string, string>): Promise<Response> {
  return exports.default.fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: BODY }),
  );
}

describe("Gemini's v1alpha API version through the Worker", () => {
  const answer = { candidates: [{ content: { role: "model", parts: [{ text: "From v1alpha." }] }, finishReason: "STOP", index: 0 }] };

  for (const [how, path, headers] of [
    ["x-goog-api-key, as google-genai sends it", "/v1alpha/models/gemini-py-alpha:generateContent", { "x-goog-api-key": "gm-py-alpha" }],
    ["?key=, as REST examples do", "/v1alpha/models/gemini-py-alpha:streamGenerateContent?alt=sse&key=gm-py-alpha", {}],
  ] as const) {
    it(`is relayed to the upstream, not cached (${how})`, async () => {
      const { result, calls } = await withGeminiUpstream({ json: answer }, async () => {
        const res = await post(path, headers);
        return { status: res.status, cache: res.headers.get("muscle-mem-cache"), body: await res.json() };
      });
      expect(result).toEqual({ status: 200, cache: "bypass", body: answer });
      expect(calls).toEqual([JSON.parse(BODY)]);
    });
  }
});

/**
 * `client.files.upload(...)` starts a resumable upload with `POST /upload/v1beta/files` (the bytes then go to
 * the `x-goog-upload-url` the upstream answers). Before, the Worker answered its own 404 ("No such route."),
 * so an agent that uploads a file through the Worker's base URL broke. It is relayed unchanged.
 */
describe("google-genai's file upload through the Worker", () => {
  it("the upload's start is relayed to GEMINI_BASE_URL with its headers, the upstream's answer back", async () => {
    const body = `{"file": {"display_name": "receipt", "mime_type": "text/plain", "size_bytes": 17}}`;
    const started = { file: { name: "files/abc-123" } };
    const { result, calls } = await withGeminiUpstream({ json: started }, async () => {
      const res = await exports.default.fetch(
        new Request("http://mm.test/upload/v1beta/files", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-goog-api-key": "gm-py-upload",
            "x-goog-api-client": "google-genai-sdk/2.25.0 gl-python/3.11.7",
            "x-goog-upload-protocol": "resumable",
            "x-goog-upload-command": "start",
            "x-goog-upload-header-content-length": "17",
            "x-goog-upload-header-content-type": "text/plain",
          },
          body,
        }),
      );
      return { status: res.status, cache: res.headers.get("muscle-mem-cache"), body: await res.json() };
    });
    expect(result).toEqual({ status: 200, cache: "bypass", body: started });
    expect(calls).toEqual([JSON.parse(body)]);
  });
});

describe("the new Gemini paths are model routes: WORKER_TOKEN keeps strangers off them", () => {
  for (const path of ["/v1alpha/models/gemini-py-alpha:generateContent", "/upload/v1beta/files"]) {
    it(`${path} without the Worker credential is a 401 in Gemini's envelope, before the upstream`, async () => {
      const { result, calls } = await withGeminiUpstream({ json: {} }, async () => {
        const ctx = createExecutionContext();
        const request = new Request(`http://mm.test${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-goog-api-key": "gm-py-gate" },
          body: BODY,
        });
        const res = await worker.fetch(request, { ...env, WORKER_TOKEN: "worker-secret" } as Env, ctx);
        await waitOnExecutionContext(ctx);
        return { status: res.status, error: ((await res.json()) as { error: { status: string } }).error.status };
      });
      expect(result).toEqual({ status: 401, error: "UNAUTHENTICATED" });
      expect(calls).toEqual([]);
    });
  }
});
