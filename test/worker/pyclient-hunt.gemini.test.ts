import { describe, expect, it } from "vitest";
import { gemini, geminiGenerations } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";

/**
 * google-genai (Python, 2.25.0) `client.chats`: its history keeps one model content per streamed chunk
 * (`send_message_stream`) and the candidate's content whole (`send_message`). The bodies below are the bytes
 * the Python client sent (json.dumps: `", "` and `": "` separators), captured by scripts/python-compat's
 * logging upstream, for a chat recorded one way and run again the other way. Before, the model's turn was
 * keyed as sent, chunk by chunk, so the chat's second call missed whichever way it came back (`hit, miss`).
 */
const TOOLS = `"tools": [{"functionDeclarations": [{"name": "get_order", "parameters_json_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}]}], "generationConfig": {}`;
const USER = `{"parts": [{"text": "Please refund order #C-3."}], "role": "user"}`;
const RESULT = `{"parts": [{"functionResponse": {"name": "get_order", "response": {"order_id": "C-3", "status": "shipped"}}}], "role": "user"}`;
const CALL = `{"functionCall": {"args": {"order_id": "C-3"}, "name": "get_order"}}`;
const FIRST = `{"contents": [${USER}], ${TOOLS}}`;
/** send_message_stream's history: the scripted model's 7-character chunks, each a content of its own. */
const CHUNKED = ["Let me ", "look th", "at orde", "r up."].map((t) => `{"parts": [{"text": "${t}"}], "role": "model"}`).join(", ");
const SECOND_STREAMED = `{"contents": [${USER}, ${CHUNKED}, {"parts": [${CALL}], "role": "model"}, ${RESULT}], ${TOOLS}}`;
/** send_message's history: the candidate's content. */
const SECOND_JSON = `{"contents": [${USER}, {"parts": [{"text": "Let me look that order up."}, ${CALL}], "role": "model"}, ${RESULT}], ${TOOLS}}`;
/** send_message_stream's history of a hit recorded from JSON: one chunk per recorded part. */
const SECOND_STREAMED_HIT = `{"contents": [${USER}, {"parts": [{"text": "Let me look that order up."}], "role": "model"}, {"parts": [${CALL}], "role": "model"}, ${RESULT}], ${TOOLS}}`;

async function send(model: string, key: string, body: string, stream: boolean): Promise<{ outcome: string | null; text: string }> {
  return settled(async () => {
    const res = await gemini(model, body, { key, stream });
    const text = await res.text();
    expect(res.status).toBe(200);
    return { outcome: res.headers.get("muscle-mem-cache"), text };
  });
}

describe("google-genai chats through the cache, streamed one way and replayed the other", () => {
  it("a chat recorded with send_message_stream is served whole through send_message", async () => {
    const model = uniqueModel("py-chat");
    const key = `gm-py-${crypto.randomUUID()}`;
    const outcomes = [];
    for (const [body, stream] of [
      [FIRST, true],
      [SECOND_STREAMED, true],
      [FIRST, false],
      [SECOND_JSON, false],
    ] as const)
      outcomes.push((await send(model, key, body, stream)).outcome);
    expect(outcomes).toEqual(["miss", "miss", "hit", "hit"]);
    expect(await geminiGenerations(model)).toBe(2);
  });

  it("a chat recorded with send_message is served whole through send_message_stream", async () => {
    const model = uniqueModel("py-chat");
    const key = `gm-py-${crypto.randomUUID()}`;
    const outcomes = [];
    for (const [body, stream] of [
      [FIRST, false],
      [SECOND_JSON, false],
      [FIRST, true],
      [SECOND_STREAMED_HIT, true],
    ] as const)
      outcomes.push((await send(model, key, body, stream)).outcome);
    expect(outcomes).toEqual(["miss", "miss", "hit", "hit"]);
    expect(await geminiGenerations(model)).toBe(2);
  });

  it("what the model turn says still decides: other text, a user turn split in two, a thought part are each a miss", async () => {
    const model = uniqueModel("py-chat");
    const key = `gm-py-${crypto.randomUUID()}`;
    await send(model, key, FIRST, false);
    expect((await send(model, key, SECOND_JSON, false)).outcome).toBe("miss");
    const variants = [
      // The chunks join to other text.
      SECOND_STREAMED.replace('"r up."', '"r up!"'),
      // The same words, the user's turn in two contents: user turns are keyed as sent.
      SECOND_JSON.replace(USER, `{"parts": [{"text": "Please refund "}], "role": "user"}, {"parts": [{"text": "order #C-3."}], "role": "user"}`),
      // A thought summary is never joined with the text beside it.
      SECOND_STREAMED.replace(`{"parts": [{"text": "Let me "}], "role": "model"}`, `{"parts": [{"text": "Let me ", "thought": true}], "role": "model"}`),
    ];
    for (const body of variants) expect((await send(model, key, body, false)).outcome).toBe("miss");
    expect(await geminiGenerations(model)).toBe(2 + variants.length);
  });
});
