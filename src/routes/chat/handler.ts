import { cachedCompletion } from "../flow/cached-completion";
import { chatAdapter } from "./adapter";

/** `POST /v1/chat/completions`: the one cached flow (src/routes/flow) over the chat adapter. */
export const chatCompletions = cachedCompletion(chatAdapter);
