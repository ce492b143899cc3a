import { ApiError } from "../errors";

/** The types of a cursor's elements, and the tuple they decode to. */
export type CursorShape = readonly ("string" | "number")[];
export type CursorOf<T extends CursorShape> = { -readonly [K in keyof T]: T[K] extends "string" ? string : number };

/** Encodes a keyset position as an opaque cursor. */
export function encodeCursor(position: readonly (string | number)[]): string {
  return btoa(JSON.stringify(position)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Reads a cursor made by `encodeCursor` with the expected element types;
 * anything else is null (the route answers it with a 400).
 */
export function readCursor<T extends CursorShape>(cursor: string, shape: T): CursorOf<T> | null {
  try {
    const json = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const value: unknown = JSON.parse(json);
    if (Array.isArray(value) && value.length === shape.length && value.every((v, i) => typeof v === shape[i] && (typeof v !== "number" || Number.isFinite(v)))) {
      return value as CursorOf<T>;
    }
  } catch {
    // not a cursor
  }
  return null;
}

/**
 * @deprecated The store throws no HTTP errors: routes use `decodeCursor` of
 * src/routes/api/params.ts. Kept until src/routes/api/trees.ts and export.ts import that one.
 */
export function decodeCursor<T extends CursorShape>(cursor: string, shape: T, param = "cursor"): CursorOf<T> {
  const position = readCursor(cursor, shape);
  if (!position) throw new ApiError("invalid_request", "cursor is not a cursor this API returned.", param);
  return position;
}
