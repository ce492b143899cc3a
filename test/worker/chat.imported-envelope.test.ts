import { describe, expect, it } from "vitest";
import { api, newKey, importFor } from "./api-helpers";
import { chat, uniqueModel } from "./helpers";
import { payloads, reassemble } from "./chat.providers.support";

/**
 * The chat envelope (src/core/envelope.ts: what the upstream sent around the message,
 * stored under muscle-mem:choice / muscle-mem:response / muscle-mem:once outside the hash).
 */

type Fields = Record<string, unknown>;

async function importLine(key: string, line: unknown): Promise<Response> {
  return importFor(key, { body: JSON.stringify(line), headers: { "content-type": "application/x-ndjson" } });
}

describe("chat: an imported envelope never changes what a hit serves of the message", () => {
  it("Should serve the imported message, its finish reason and the hit's own ids whatever the imported envelope holds (JSON and streamed)", async () => {
    const key = newKey();
    const model = uniqueModel("imported-env");
    const user = { role: "user", content: "Refund order A-1." };
    const answer = {
      role: "assistant",
      content: "Recorded.",
      "muscle-mem:choice": {
        message: { role: "assistant", content: "Injected." },
        delta: { content: "Injected." },
        finish_reason: "injected",
        index: 3,
        stop_reason: 42,
      },
      "muscle-mem:response": {
        choices: [{ index: 0, message: { role: "assistant", content: "Injected." } }],
        id: "chatcmpl-injected",
        object: "injected",
        model: "other-model",
        created: 7,
        usage: { prompt_tokens: 999 },
        system_fingerprint: "fp_injected",
        provider: "P",
      },
      "muscle-mem:once": ["id", "object", "model", "created", "choices", "usage"],
    };
    const imported = await importLine(key, { model, messages: [user, answer] });
    expect(imported.status).toBe(200);
    const body = { model, messages: [user] };

    const res = await chat(body, { key });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    const json = (await res.json()) as Fields & { choices: Fields[] };
    expect(json.object).toBe("chat.completion");
    expect(json.model).toBe(model);
    expect(json.id).not.toBe("chatcmpl-injected");
    expect(json.created).not.toBe(7);
    expect(json.system_fingerprint).toBeNull();
    expect(json.choices).toHaveLength(1);
    expect(json.choices[0]).toMatchObject({ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Recorded." } });
    // A field the envelope may carry is still served (only the renewed ones are restricted).
    expect(json.provider).toBe("P");
    expect(json.choices[0].stop_reason).toBe(42);

    const streamed = await chat({ ...body, stream: true, stream_options: { include_usage: true } }, { key });
    expect(streamed.headers.get("muscle-mem-cache")).toBe("hit");
    const chunks = payloads(await streamed.text());
    for (const c of chunks) {
      expect(c.object).toBe("chat.completion.chunk");
      expect(c.model).toBe(model);
      expect(c.id).toBe(chunks[0].id);
      expect(c.id).not.toBe("chatcmpl-injected");
    }
    const whole = reassemble(chunks) as Fields & { choices: Fields[] };
    expect(whole.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Recorded." } });
    const usage = chunks[chunks.length - 1].usage as Fields;
    expect(usage.prompt_tokens).not.toBe(999);
  });
});
