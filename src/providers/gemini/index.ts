import { providerModule } from "../module";
import { geminiAdapter } from "./adapter";
import { geminiTrajectory } from "./trajectory-line";

/** Gemini `generateContent` and `streamGenerateContent`. */
export const gemini = providerModule(geminiAdapter, geminiTrajectory);
