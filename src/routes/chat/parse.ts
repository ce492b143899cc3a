import { chatRequest, type ChatRequest } from "../../cache/messages";
import { parseJsonBody } from "../body";

/** Reads the body within `maxBytes` and validates it as a chat request; every failure is a 4xx ApiError. */
export function parseChatRequest(request: Request, maxBytes: number): Promise<{ raw: string; body: ChatRequest; lossy: string | null }> {
  return parseJsonBody(request, maxBytes, chatRequest);
}
