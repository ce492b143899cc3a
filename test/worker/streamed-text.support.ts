/** What a streamed answer said on any of the four APIs, for the tests that compare answers across them. */

/** The text a streamed answer carried, whatever the API: its deltas, concatenated. */
export function streamedText(sse: string): string {
  let text = "";
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]" || data === "") continue;
    const event = JSON.parse(data) as Record<string, unknown>;
    const delta = (event.choices as Array<{ delta?: { content?: string } }> | undefined)?.[0]?.delta?.content;
    if (typeof delta === "string") text += delta;
    if (event.type === "content_block_delta") text += (event.delta as { text?: string }).text ?? "";
    if (event.type === "response.output_text.delta") text += String(event.delta);
    const parts = (event.candidates as Array<{ content?: { parts?: Array<{ text?: string }> } }> | undefined)?.[0]?.content?.parts;
    for (const part of parts ?? []) text += part.text ?? "";
  }
  return text;
}
