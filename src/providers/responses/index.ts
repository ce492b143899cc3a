import { providerModule } from "../module";
import { responsesTemplateView } from "./template-view";
import { OPENAI_CREDENTIALS, OPENAI_UPSTREAM } from "../openai";
import { responsesAdapter } from "./adapter";
import { responsesTrajectory } from "./trajectory-line";
import { responsesView, responsesPreview } from "./view";
import { responsesRequestPaths } from "./request-paths";

/** OpenAI Responses (`POST /v1/responses`); its other calls (`GET /v1/responses/{id}`, …) take the general pass-through. */
export const responses = providerModule(responsesAdapter, {
  format: responsesTrajectory,
  routes: { paths: ["/v1/responses"] },
  credentials: OPENAI_CREDENTIALS,
  upstream: OPENAI_UPSTREAM,
  view: responsesView,
  preview: responsesPreview,
  requestPaths: responsesRequestPaths,
  templateView: responsesTemplateView,
});
