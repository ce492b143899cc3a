import { providerModule } from "../module";
import { responsesAdapter } from "./adapter";
import { responsesTrajectory } from "./trajectory-line";

/** OpenAI Responses (`POST /v1/responses`). */
export const responses = providerModule(responsesAdapter, responsesTrajectory);
