/**
 * A Responses API `response` object as a scripted upstream answers it: `output` items as given, the usage
 * block the real API always sends (cached and reasoning token details included).
 */
export function responsesReply(model: unknown, output: unknown[], id: string | number = "x"): Record<string, unknown> {
  return {
    id: `resp_${id}`,
    object: "response",
    created_at: 1,
    status: "completed",
    model,
    output,
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    },
  };
}
