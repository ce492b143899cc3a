/**
 * Whether `text` is whole JSON. A stored answer keeps some values as the model
 * wrote them (an Anthropic tool input, a Gemini call's args); a hit parses them,
 * so a row whose text is not JSON (damaged, or imported so) is never rendered.
 */
export function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
