import type { MiddlewareHandler } from "hono";

/**
 * Headers on every /api response, errors included. The API serves recorded, attacker-controllable text
 * (a node, an export's JSONL) on the dashboard's origin: never sniffed as markup, never framed or run as a
 * document, never kept by a cache (each answer is one credential's view).
 */
export const API_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "cache-control": "no-store",
};

/** Middleware that sets API_HEADERS on the response, after the route (or the error handler) made it. */
export function apiHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(API_HEADERS)) c.res.headers.set(name, value);
  };
}
