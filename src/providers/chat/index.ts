import { providerModule } from "../module";
import { chatAdapter } from "./adapter";
import { chatTrajectory } from "./trajectory-format";

/** OpenAI Chat Completions (`POST /v1/chat/completions`). */
export const chat = providerModule(chatAdapter, chatTrajectory);
