import { Hono } from "hono";
import { ApiError, errorResponse } from "../core/errors";
import { observe } from "./observe";
import { logEvent } from "../observability/log-event";
import { apiRoutes } from "./api";
import { chatCompletions } from "./routes/chat";
import { messages } from "./routes/messages";
import { anthropicPassThrough } from "./routes/messages-passthrough";
import { passThrough } from "./passthrough";
import { cachedCompletion } from "../engine/cached-completion";
import { responsesAdapter } from "../providers/responses/adapter";
import { geminiRoutes } from "./routes/gemini";

/** The Worker's routes: the cached chat endpoint, the pass-through and a health check. */
export function newApp(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.use("*", observe());
  app.get("/healthz", (c) => c.json({ ok: true, service: "muscle-mem" }));
  app.post("/v1/chat/completions", chatCompletions);
  app.all("/v1/chat/completions", () => {
    throw new ApiError("method_not_allowed", "Use POST for /v1/chat/completions.");
  });
  app.post("/v1/messages", messages);
  app.all("/v1/messages", () => {
    throw new ApiError("method_not_allowed", "Use POST for /v1/messages.");
  });
  app.post("/v1/responses", cachedCompletion(responsesAdapter));
  app.all("/v1beta/*", geminiRoutes);
  app.use("/v1/*", anthropicPassThrough);
  app.all("/v1/*", passThrough);
  app.route("/api", apiRoutes());
  app.notFound(() => new ApiError("not_found", "No such route.").toResponse());
  app.onError((err) => {
    if (!(err instanceof ApiError)) logEvent("error", "unhandled_error", { error: String(err) });
    return errorResponse(err);
  });
  return app;
}
