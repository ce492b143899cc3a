import { ApiError } from "../errors";

/** Encodes a keyset position as an opaque cursor. */
export function encodeCursor(position: readonly (string | number)[]): string {
  return btoa(JSON.stringify(position)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Decodes a cursor made by `encodeCursor` with the expected element types;
 * anything else is a 400 on `param`.
 */
export function decodeCursor<T extends readonly ("string" | "number")[]>(cursor: string, shape: T, param = "cursor"): { -readonly [K in keyof T]: T[K] extends "string" ? string : number } {
  try {
    const json = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const value: unknown = JSON.parse(json);
    if (Array.isArray(value) && value.length === shape.length && value.every((v, i) => typeof v === shape[i] && (typeof v !== "number" || Number.isFinite(v)))) {
      return value as { -readonly [K in keyof T]: T[K] extends "string" ? string : number };
    }
  } catch {
    // fall through to the 400
  }
  throw new ApiError("invalid_request", "cursor is not a cursor this API returned.", param);
}
