import { cachedCompletion } from "../../engine/cached-completion";
import { messagesAdapter } from "../../providers/anthropic/adapter";

/** `POST /v1/messages` (Anthropic): the one cached flow (src/routes/flow) over the Messages adapter. */
export const messages = cachedCompletion(messagesAdapter);
