import { ERROR_HEADER } from "./protocol";

/** The fixed list of error codes the Worker itself answers with, and their statuses. */
const STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  method_not_allowed: 405,
  body_too_large: 413,
  unsupported_media_type: 415,
  not_cached: 504,
  upstream_unreachable: 502,
  upstream_incomplete: 502,
  upstream_timeout: 504,
  internal_error: 500,
  analytics_not_configured: 501,
  analytics_unavailable: 502,
} as const;

export type ErrorCode = keyof typeof STATUS;

const TYPE: Record<ErrorCode, string> = {
  invalid_json: "invalid_request_error",
  invalid_request: "invalid_request_error",
  unauthorized: "authentication_error",
  forbidden: "permission_error",
  not_found: "not_found_error",
  conflict: "invalid_request_error",
  method_not_allowed: "invalid_request_error",
  body_too_large: "invalid_request_error",
  unsupported_media_type: "invalid_request_error",
  not_cached: "cache_miss",
  upstream_unreachable: "upstream_error",
  upstream_incomplete: "upstream_error",
  upstream_timeout: "upstream_error",
  internal_error: "server_error",
  analytics_not_configured: "not_configured_error",
  analytics_unavailable: "upstream_error",
};

/**
 * Headers every envelope of `error` carries: its code (`muscle-mem-error`, which Anthropic's and Gemini's
 * envelopes have no field for), and `x-should-retry: false` on an `only-if-cached` miss, which the openai and
 * Anthropic SDKs read before their default retries (a 504 is otherwise retried twice).
 */
export function errorHeaders(error: { code: ErrorCode }): Record<string, string> {
  const headers: Record<string, string> = { [ERROR_HEADER]: error.code };
  if (error.code === "not_cached") headers["x-should-retry"] = "false";
  return headers;
}

/** An error answered to the client in OpenAI's `{error:{message,type,code,param}}` envelope. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }

  get status(): number {
    return STATUS[this.code];
  }

  toResponse(headers?: HeadersInit): Response {
    const body = { error: { message: this.message, type: TYPE[this.code], code: this.code, param: this.param } };
    const response = Response.json(body, { status: this.status, headers });
    for (const [name, value] of Object.entries(errorHeaders(this))) response.headers.set(name, value);
    return response;
  }
}

/** The one error response for anything that is not an ApiError: no internals leak. */
export function errorResponse(err: unknown): Response {
  if (err instanceof ApiError) return err.toResponse();
  return new ApiError("internal_error", "The cache failed unexpectedly.").toResponse();
}
