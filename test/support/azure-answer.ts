/**
 * An Azure OpenAI Chat Completions answer as Azure sends it: `content_filter_results` on the choice,
 * `prompt_filter_results` at the top level (test/unit/replay-fidelity.azure.test.ts, test/worker/chat.azure.test.ts).
 */
const safe = { filtered: false, severity: "safe" };
export const filters = { hate: safe, protected_material_text: { filtered: false, detected: false }, self_harm: safe, sexual: safe, violence: safe };
export const promptFilters = [
  { prompt_index: 0, content_filter_results: { hate: safe, jailbreak: { filtered: false, detected: false }, self_harm: safe, sexual: safe, violence: safe } },
];
export const message = { content: "Refunded.", refusal: null, role: "assistant" };
export const usage = { completion_tokens: 3, prompt_tokens: 9, total_tokens: 12 };
export const azure = {
  choices: [{ content_filter_results: filters, finish_reason: "stop", index: 0, logprobs: null, message }],
  created: 1,
  id: "chatcmpl-A",
  model: "gpt-4o-2024-08-06",
  object: "chat.completion",
  prompt_filter_results: promptFilters,
  system_fingerprint: "fp_1",
  usage,
};
