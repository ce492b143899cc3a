import { providerModule } from "../module";
import { messagesAdapter } from "./adapter";
import { anthropicTrajectory } from "./trajectory-format";

/** Anthropic Messages (`POST /v1/messages`). */
export const anthropic = providerModule(messagesAdapter, anthropicTrajectory);
