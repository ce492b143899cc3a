import { providerModule } from "../module";
import { responsesAdapter } from "./adapter";
import { responsesTrajectory } from "./trajectory-line";

/** OpenAI Responses (`POST /v1/responses`); its other calls (`GET /v1/responses/{id}`, …) take the general pass-through. */
export const responses = providerModule(responsesAdapter, responsesTrajectory, { paths: ["/v1/responses"] });
