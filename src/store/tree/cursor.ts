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
    if (
      Array.isArray(value) &&
      value.length === shape.length &&
      value.every((v, i) => typeof v === shape[i] && (typeof v !== "number" || Number.isFinite(v)))
    ) {
      return value as CursorOf<T>;
    }
  } catch {
    // not a cursor
  }
  return null;
}
