import { providerModule } from "../module";
import { anthropicTemplateView } from "./template-view";
import { ANTHROPIC_UPSTREAM, messagesAdapter } from "./adapter";
import { anthropicTrajectory } from "./trajectory-format";
import { anthropicView, anthropicPreview } from "./view";
import { messagesRequestPaths } from "./request-paths";

/**
 * Anthropic Messages (`POST /v1/messages`). The Anthropic SDK's other calls (`/v1/messages/count_tokens`,
 * `/v1/messages/batches`, `/v1/models`, …) carry `anthropic-version` and go to `ANTHROPIC_BASE_URL` unchanged.
 */
export const anthropic = providerModule(messagesAdapter, {
  format: anthropicTrajectory,
  routes: {
    paths: ["/v1/messages"],
    methodNotAllowed: true,
    passThrough: {
      paths: ["/v1/*"],
      claims: (headers) => headers.has("anthropic-version"),
    },
  },
  // Anthropic's SDKs send the key in x-api-key.
  credentials: { bareKeys: ["x-api-key"] },
  upstream: ANTHROPIC_UPSTREAM,
  view: anthropicView,
  preview: anthropicPreview,
  requestPaths: messagesRequestPaths,
  templateView: anthropicTemplateView,
});
