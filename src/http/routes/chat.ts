import { cachedCompletion } from "../../engine/cached-completion";
import { chatTemplates } from "../../engine/template-hook";
import { chatAdapter } from "../../providers/chat/adapter";

/** `POST /v1/chat/completions`: the one cached flow (src/engine) over the chat adapter, with declared and learned templates. */
export const chatCompletions = cachedCompletion({ ...chatAdapter, templates: chatTemplates });
