// @ts-check
/** The trajectory API client: the token lives in sessionStorage (this tab only). */
const KEY = "muscle-mem-token";

export const session = {
  /** @returns {string | null} */
  get token() {
    return sessionStorage.getItem(KEY);
  },
  /** @param {string | null} value */
  set token(value) {
    if (value) sessionStorage.setItem(KEY, value);
    else sessionStorage.removeItem(KEY);
  },
};

export class ApiFailure extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Calls /api with the session's bearer token.
 * @param {string} path
 * @param {{ method?: string, body?: unknown }} [init]
 */
export async function api(path, init = {}) {
  const headers = { authorization: `Bearer ${session.token ?? ""}` };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`/api${path}`, { method: init.method ?? "GET", headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new ApiFailure(res.status, json?.error?.message ?? `HTTP ${res.status}`);
  return json;
}
