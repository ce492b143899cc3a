import { templatedProviderModule } from "../module";
import { OPENAI_CREDENTIALS, OPENAI_UPSTREAM } from "../openai";
import { chatAdapter } from "./adapter";
import { chatTrajectory } from "./trajectory-format";
import { chatView, chatPreview } from "./view";
import { chatRequestPaths } from "./request-paths";

/** OpenAI Chat Completions (`POST /v1/chat/completions`), with declared and learned templates. */
export const chat = templatedProviderModule(chatAdapter, {
  format: chatTrajectory,
  routes: { paths: ["/v1/chat/completions"], methodNotAllowed: true },
  credentials: OPENAI_CREDENTIALS,
  upstream: OPENAI_UPSTREAM,
  view: chatView,
  preview: chatPreview,
  requestPaths: chatRequestPaths,
});
