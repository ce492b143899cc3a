import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import type { AuthVariables } from "../auth/middleware";
import { ApiError } from "../../core/errors";
import { readJsonText } from "../../core/body";
import { HEX32 } from "../../core/protocol";
import { readCursor, type CursorOf, type CursorShape } from "../../store/tree/cursor";
import { EVERY_TENANT, tenantScope, type Scope } from "../../store/tree/scope";

/** The context of every /api route: the Worker's env and the resolved caller. */
export type ApiCtx = Context<{ Bindings: Env; Variables: AuthVariables }>;

/** Validates a path id; a malformed one is a 400 (a well-formed unknown one is a 404 later). */
export function hashParam(c: Pick<ApiCtx, "req">, name: string): string {
  const value = c.req.param(name) ?? "";
  if (!HEX32.test(value)) throw new ApiError("invalid_request", `${name} must be 32 lowercase hex characters.`, name);
  return value;
}

/** Hono variables set by `withQuery`: the route's parsed query. */
export interface QueryVariables<T> {
  query: T;
}

/**
 * Middleware that parses the query before anything is read (so a bad query is
 * a 400 even for an unknown tree) and sets the result as `c.var.query`.
 */
export function withQuery<T>(parse: (raw: Record<string, string>) => T): MiddlewareHandler<{ Bindings: Env; Variables: AuthVariables & QueryVariables<T> }> {
  return async (c, next) => {
    c.set("query", parse(c.req.query()));
    await next();
  };
}

/** Decodes a cursor this API returned with the expected element types; anything else is a 400 on `param`. */
export function decodeCursor<T extends CursorShape>(cursor: string, shape: T, param = "cursor"): CursorOf<T> {
  const position = readCursor(cursor, shape);
  if (!position) throw new ApiError("invalid_request", "cursor is not a cursor this API returned.", param);
  return position;
}

/** A page size: 1..max, default `fallback`. */
export function limitSchema(fallback: number, max: number) {
  return z.coerce.number().int().min(1).max(max).default(fallback);
}

/** Parses with zod; the first issue becomes a 400 naming its parameter. */
export function parseWith<T extends z.ZodType>(schema: T, input: unknown, what = "query"): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue.path.length > 0 ? issue.path.join(".") : what;
  throw new ApiError("invalid_request", `${param}: ${issue.message}`, param);
}

/**
 * The most bytes an API route's JSON body may hold (`POST /api/prune`, `/api/trees/:id/move`: a few fields).
 * Read as the model routes read theirs (src/core/body.ts): chunk by chunk, gzip or deflate decoded, a 413 as
 * soon as it passes this, never buffered whole. `/api/import` streams its JSONL within MAX_BODY_BYTES.
 */
export const API_BODY_BYTES = 64 * 1024;

/**
 * Reads a JSON body and parses it with `schema`: another Content-Type is a 415, more than API_BODY_BYTES a
 * 413, not JSON a 400 `invalid_json` (`shape` says what to send), a bad field a 400 naming it.
 */
export async function parseBody<T extends z.ZodType>(c: { req: { raw: Request } }, schema: T, shape = "a JSON object"): Promise<z.infer<T>> {
  const text = await readJsonText(c.req.raw, API_BODY_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", `The body must be ${shape}.`);
  }
  return parseWith(schema, json, "body");
}

/** The caller's scope: every tenant for the admin, else its own tenant. */
export function scopeOf(c: { var: AuthVariables }): Scope {
  const caller = c.var.caller;
  return caller.admin ? EVERY_TENANT : tenantScope(caller.tenant);
}

/** The 404 for unknown ids and for other tenants' ids alike (no oracle). */
export function notFound(what: string): ApiError {
  return new ApiError("not_found", `No such ${what}.`);
}
