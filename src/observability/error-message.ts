/** The longest error message kept with a request's row. */
export const ERROR_MESSAGE_MAX = 300;

/** A JSON value's `error.message` (OpenAI, Anthropic, Gemini envelopes), or its `message`. */
function messageIn(json: unknown): string | null {
  if (typeof json !== "object" || json === null) return null;
  const error = (json as { error?: unknown }).error;
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string")
    return (error as { message: string }).message;
  if (typeof error === "string") return error;
  const message = (json as { message?: unknown }).message;
  return typeof message === "string" ? message : null;
}

/**
 * The message of an error answer (a copy of the response, read after it was sent): the envelope's
 * `error.message`, else the start of its text, passed through `clean` (which scrubs what must not be kept)
 * and then cut to at most ERROR_MESSAGE_MAX characters. Never throws.
 */
export async function errorMessageOf(response: Response, clean: (message: string) => string = (m) => m): Promise<string | null> {
  try {
    const text = (await response.text()).slice(0, 16_384);
    let message: string | null = null;
    try {
      message = messageIn(JSON.parse(text));
    } catch {
      message = text.trim() || null;
    }
    return message === null ? null : clean(message).slice(0, ERROR_MESSAGE_MAX);
  } catch {
    return null;
  }
}
