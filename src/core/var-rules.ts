import { z } from "zod";

/**
 * The rules the Worker's vars are parsed by (src/config.ts): each a zod schema of an optional string var,
 * whose unset or blank value is its default. Pure.
 */

/**
 * A whole number var from `min` to `max`; unset or blank is `fallback`.
 *
 * @example wholeNumber(1000).parse("250") // 250
 */
export function wholeNumber(fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      const text = (value ?? "").trim();
      if (text === "") return fallback;
      const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
      if (n >= min && n <= max) return n;
      ctx.addIssue({
        code: "custom",
        message: max === Number.MAX_SAFE_INTEGER ? `must be a whole number, at least ${min}` : `must be a whole number from ${min} to ${max}`,
      });
      return z.NEVER;
    });
}

/** A var with a fixed set of values (case-insensitive); unset or blank is `fallback`. */
export function oneOf<T extends string>(values: readonly T[], fallback: T) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      const text = (value ?? "").trim().toLowerCase();
      if (text === "") return fallback;
      if ((values as readonly string[]).includes(text)) return text as T;
      ctx.addIssue({ code: "custom", message: `must be one of ${values.join(", ")}` });
      return z.NEVER;
    });
}

/** An optional text var (trimmed; blank is unset). */
export const text = z
  .string()
  .optional()
  .transform((value) => value?.trim() ?? "");

/** A tenant id: what `GET /api/whoami` answers for a key (32 lowercase hex characters). */
const TENANT_ID = /^[0-9a-f]{32}$/;

/**
 * A list of tenant ids (comma or space separated); `*` alone stands for every tenant. Unset or blank: none.
 *
 * @example tenantList.parse("*") // "*"
 */
export const tenantList = z
  .string()
  .optional()
  .transform((value, ctx): TenantList => {
    const items = (value ?? "").split(/[\s,]+/).filter((item) => item !== "");
    if (items.length === 1 && items[0] === "*") return "*";
    const bad = items.find((item) => !TENANT_ID.test(item));
    if (bad === undefined) return new Set(items);
    ctx.addIssue({ code: "custom", message: `must be tenant ids (32 lowercase hex characters, GET /api/whoami) or *, got '${bad.slice(0, 40)}'` });
    return z.NEVER;
  });

/** Tenant ids, or `*` for every tenant. */
export type TenantList = ReadonlySet<string> | "*";

/** Whether `tenant` is on `list`. */
export function listed(list: TenantList, tenant: string): boolean {
  return list === "*" || list.has(tenant);
}
