import type { ApiError } from "../../core/errors";
import { errorHeaders } from "../../core/errors";

/** Anthropic's error types for the statuses the Worker answers with (docs: "Errors"); any other is `api_error`. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  405: "invalid_request_error",
  409: "invalid_request_error",
  413: "request_too_large",
  415: "invalid_request_error",
  429: "rate_limit_error",
  504: "timeout_error",
};

/** An error in Anthropic's envelope: `{"type":"error","error":{"type","message"}}`. */
export function anthropicErrorBody(status: number, message: string): { type: "error"; error: { type: string; message: string } } {
  return { type: "error", error: { type: TYPE_BY_STATUS[status] ?? "api_error", message } };
}

/** The Worker's own error on an Anthropic route, in Anthropic's envelope, with the headers every envelope carries. */
export function anthropicErrorResponse(error: ApiError, headers?: Record<string, string>): Response {
  return Response.json(anthropicErrorBody(error.status, error.message), { status: error.status, headers: { ...errorHeaders(error), ...headers } });
}
