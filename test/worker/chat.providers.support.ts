/**
 * Chat Completions answers as OpenAI-compatible upstreams other than OpenAI send them (JSON and streamed),
 * with the fields of their own around and inside the message, and what a client makes of a response:
 * the JSON body, or a stream reassembled as the `openai` SDK's ChatCompletionStream does (top-level and
 * choice fields: the last value sent wins; delta text fields concatenated, as the JSON answer has them).
 */

const usage = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 };

export interface ProviderShape {
  name: string;
  /** The JSON answer. */
  json: Record<string, unknown>;
  /** The same answer streamed: the `data:` payloads, `[DONE]` included. */
  sse: string[];
}

type Fields = Record<string, unknown>;

/** A chunk stream: `top(i, last)` top-level fields per chunk, `choice(i, last)` choice fields, around `deltas`. */
function stream(
  deltas: Fields[],
  finish: string,
  top: (i: number, last: boolean) => Fields,
  choice: (i: number, last: boolean) => Fields,
  tail: Fields[] = [],
): string[] {
  const all = [...deltas, {}];
  const chunks = all.map((delta, i) => {
    const last = i === all.length - 1;
    return JSON.stringify({
      id: "chatcmpl-up",
      object: "chat.completion.chunk",
      created: 1,
      model: "upstream-model",
      ...top(i, last),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: last ? finish : null, ...choice(i, last) }],
    });
  });
  return [...chunks, ...tail.map((t) => JSON.stringify(t)), "[DONE]"];
}

function completion(message: Fields, top: Fields, choice: Fields, finish = "stop"): Fields {
  return {
    id: "chatcmpl-up",
    object: "chat.completion",
    created: 1,
    model: "upstream-model",
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish, ...choice }],
    usage,
    ...top,
  };
}

const text = { role: "assistant", content: "Refunded." };
const textDeltas = [{ role: "assistant", content: "" }, { content: "Refun" }, { content: "ded." }];

/** vLLM: `stop_reason` on the choice (the stop string that ended it), `prompt_logprobs` and `kv_transfer_params` at the top level, `reasoning_content` from a reasoning parser. */
const vllmMessage = {
  role: "assistant",
  content: "Refunded.",
  refusal: null,
  annotations: null,
  audio: null,
  function_call: null,
  tool_calls: [],
  reasoning_content: "Order A-1 is eligible.",
};
export const vllm: ProviderShape = {
  name: "vLLM",
  json: completion(
    vllmMessage,
    { service_tier: null, system_fingerprint: null, prompt_logprobs: null, kv_transfer_params: { remote_block_ids: [1, 2] } },
    { stop_reason: "</answer>" },
  ),
  sse: stream(
    [{ role: "assistant", content: "" }, { reasoning_content: "Order A-1 " }, { reasoning_content: "is eligible." }, { content: "Refun" }, { content: "ded." }],
    "stop",
    (_i, last) => (last ? { kv_transfer_params: { remote_block_ids: [1, 2] } } : {}),
    (_i, last) => ({ stop_reason: last ? "</answer>" : null }),
  ),
};

/** OpenRouter: `provider` on the response (every chunk), `native_finish_reason` on the choice, `reasoning` in the message. */
const routerMessage = { role: "assistant", content: "Refunded.", refusal: null, reasoning: "Order A-1 is eligible." };
export const openRouter: ProviderShape = {
  name: "OpenRouter",
  json: completion(routerMessage, { id: "gen-1", provider: "OpenAI" }, { native_finish_reason: "completed" }),
  sse: stream(
    [{ role: "assistant", content: "" }, { reasoning: "Order A-1 " }, { reasoning: "is eligible." }, { content: "Refun" }, { content: "ded." }],
    "stop",
    () => ({ id: "gen-1", provider: "OpenAI" }),
    (_i, last) => ({ native_finish_reason: last ? "completed" : null }),
  ),
};

/** Groq: `x_groq` at the top level (the first chunk names the request, the last adds its usage), `usage_breakdown`. */
const groqUsage = { queue_time: 0.01, prompt_tokens: 9, prompt_time: 0.001, completion_tokens: 3, completion_time: 0.01, total_tokens: 12, total_time: 0.011 };
export const groq: ProviderShape = {
  name: "Groq",
  json: completion(text, { x_groq: { id: "req_01" }, usage_breakdown: null, service_tier: "on_demand", system_fingerprint: "fp_g" }, {}),
  sse: stream(
    textDeltas,
    "stop",
    (i, last) => ({ service_tier: "on_demand", ...(i === 0 ? { x_groq: { id: "req_01" } } : last ? { x_groq: { id: "req_01", usage: groqUsage } } : {}) }),
    () => ({}),
  ),
};

/** DeepSeek: `reasoning_content` in the message (streamed first, then null beside the content), prompt cache counts in usage. */
const deepseekUsage = { ...usage, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 9, completion_tokens_details: { reasoning_tokens: 5 } };
export const deepseek: ProviderShape = {
  name: "DeepSeek",
  json: { ...completion({ ...text, reasoning_content: "Order A-1 is eligible." }, { system_fingerprint: "fp_d" }, {}), usage: deepseekUsage },
  sse: stream(
    [
      { role: "assistant", content: null, reasoning_content: "" },
      { content: null, reasoning_content: "Order A-1 " },
      { content: null, reasoning_content: "is eligible." },
      { content: "Refun", reasoning_content: null },
      { content: "ded.", reasoning_content: null },
    ],
    "stop",
    () => ({ system_fingerprint: "fp_d" }),
    () => ({}),
  ),
};

/** Together: a `seed` on the choice and the (empty) `prompt` list at the top level; a tool call. */
const call = { id: "call_up1", type: "function", function: { name: "refund", arguments: '{"order":"A-1"}' } };
export const together: ProviderShape = {
  name: "Together",
  json: completion({ role: "assistant", content: null, tool_calls: [call] }, { prompt: [] }, { seed: 4211 }, "tool_calls"),
  sse: stream(
    [
      { role: "assistant", content: null },
      { tool_calls: [{ index: 0, id: "call_up1", type: "function", function: { name: "refund", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"order":"A-1"}' } }] },
    ],
    "tool_calls",
    (i) => (i === 0 ? { prompt: [] } : {}),
    (_i, last) => (last ? { seed: 4211 } : {}),
  ),
};

export const shapes: ProviderShape[] = [vllm, openRouter, groq, deepseek, together];

/** The data payloads of an SSE text, parsed ([DONE] left out). */
export function payloads(sse: string): Fields[] {
  return sse
    .split("\n\n")
    .filter((e) => e.startsWith("data: ") && e.trim() !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice(6)) as Fields);
}

interface CallSnapshot {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
  [k: string]: unknown;
}

/** A chunk stream reassembled into the completion a client builds from it (choice 0). */
export function reassemble(chunks: Fields[]): Fields {
  const top: Fields = {};
  const choice: Fields = {};
  const message: Fields = {};
  const calls: CallSnapshot[] = [];
  let finish: unknown = null;
  for (const chunk of chunks) {
    const { choices, ...rest } = chunk as { choices?: Fields[] };
    Object.assign(top, rest);
    for (const c of choices ?? []) {
      const { delta, finish_reason, logprobs: _logprobs, ...other } = c as { delta?: Fields; finish_reason?: unknown; logprobs?: unknown };
      if (finish_reason) finish = finish_reason;
      Object.assign(choice, other);
      for (const [k, v] of Object.entries(delta ?? {})) {
        if (k === "tool_calls") {
          for (const t of v as Array<Fields & { index: number; function?: { name?: string; arguments?: string } }>) {
            const { index, function: fn, ...callRest } = t;
            const slot = (calls[index] ??= { function: { name: "", arguments: "" } });
            Object.assign(slot, callRest);
            if (fn?.name) slot.function.name = fn.name;
            if (fn?.arguments) slot.function.arguments += fn.arguments;
          }
        } else if (typeof v === "string" && k !== "role") message[k] = ((message[k] as string | null | undefined) ?? "") + v;
        else if (!(k in message) || v !== null) message[k] = v;
      }
    }
  }
  if (calls.length > 0) message.tool_calls = calls;
  return { ...top, choices: [{ ...choice, message, finish_reason: finish }] };
}

/** What a hit renews on every response (docs/reliability.md, "What a hit serves"): ids, created, model, system_fingerprint, usage. */
export function withoutRenewed(completion: Fields): Fields {
  const { id: _id, created: _created, model: _model, system_fingerprint: _fp, usage: _usage, object: _object, ...rest } = completion;
  const choices = (rest.choices as Fields[]).map((c) => {
    const message = { ...(c.message as Fields) };
    if (Array.isArray(message.tool_calls)) message.tool_calls = (message.tool_calls as Fields[]).map(({ id: _callId, ...call }) => call);
    return { ...c, message };
  });
  return { ...rest, choices };
}
