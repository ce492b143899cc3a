import { geminiEcho, geminiRefundDesk, startScriptedGeminiModel } from "../tools/scripted-gemini-model";

/**
 * Starts the scripted Gemini model on the port vitest.config.ts chose for
 * GEMINI_BASE_URL, once for both Worker projects (the second finds the port
 * taken by the first and shares it). Models named `echo…` echo; others run
 * the refund desk.
 */
export default async function setup(): Promise<() => Promise<void>> {
  try {
    const model = await startScriptedGeminiModel({
      port: Number(process.env.MM_TEST_GEMINI_PORT),
      script: (body, name) => (name.startsWith("echo") ? geminiEcho(body) : geminiRefundDesk(body)),
    });
    return () => model.close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") return async () => undefined;
    throw error;
  }
}
