import { providerModule } from "../module";
import { geminiAction, geminiAdapter } from "./adapter";
import { geminiTrajectory } from "./trajectory-line";

/**
 * Gemini: `POST models/{model}:generateContent` and `:streamGenerateContent` under `/v1beta/` through the
 * cached flow; every other call there (`countTokens`, `embedContent`, model lists, files) to
 * `GEMINI_BASE_URL` unchanged.
 */
export const gemini = providerModule(geminiAdapter, geminiTrajectory, {
  paths: ["/v1beta/*"],
  isCached: (url) => geminiAction(url) !== null,
  passThrough: { paths: [], base: (config) => config.geminiBaseUrl, baseVar: "GEMINI_BASE_URL" },
});
