import { cachedCompletion } from "../../engine/cached-completion";
import { chatAdapter } from "../../providers/chat/adapter";

/** `POST /v1/chat/completions`: the one cached flow (src/routes/flow) over the chat adapter. */
export const chatCompletions = cachedCompletion(chatAdapter);
