import { gemini, withGeminiUpstream, type GeminiStubReply } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";

/**
 * A Gemini miss of `body` answered by `reply`, once recorded, then the same request asked `only-if-cached`
 * as JSON and as a stream: the miss's body text, and each hit's (null when nothing was recorded: a 504).
 */
export async function geminiMissAndHits(
  body: unknown,
  reply: GeminiStubReply,
  stream: boolean,
  model = uniqueModel("gem-replay"),
  key = `gm-replay-${crypto.randomUUID()}`,
) {
  const { result: miss } = await settled(() => withGeminiUpstream(reply, async () => (await gemini(model, body, { key, stream })).text()));
  const probe = async (asStream: boolean) => {
    const res = await gemini(model, body, { key, stream: asStream, headers: { "cache-control": "only-if-cached" } });
    const text = await res.text();
    return res.status === 504 ? null : text;
  };
  return { miss, json: await probe(false), stream: await probe(true) };
}
