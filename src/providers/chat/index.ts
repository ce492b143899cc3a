import { templatedProviderModule } from "../module";
import { chatAdapter } from "./adapter";
import { chatTrajectory } from "./trajectory-format";

/** OpenAI Chat Completions (`POST /v1/chat/completions`), with declared and learned templates. */
export const chat = templatedProviderModule(chatAdapter, chatTrajectory, { paths: ["/v1/chat/completions"], methodNotAllowed: true });
