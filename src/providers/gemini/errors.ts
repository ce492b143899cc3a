/** Google's status names for the HTTP statuses the Worker answers with. */
const STATUS_NAME: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "INVALID_ARGUMENT",
  413: "INVALID_ARGUMENT",
  415: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  502: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** An error in Gemini's envelope: `{error:{code,message,status}}`. */
export function geminiErrorBody(status: number, message: string): { error: { code: number; message: string; status: string } } {
  return { error: { code: status, message, status: STATUS_NAME[status] ?? "UNKNOWN" } };
}
