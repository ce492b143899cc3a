import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withGeminiUpstream } from "./gemini.support";

/**
 * google-genai (Python 2.25.0) with `http_options=HttpOptions(api_version="v1alpha")` (Google's preview
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
