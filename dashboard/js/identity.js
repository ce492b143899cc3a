// @ts-check
import { api } from "./api.js";
import { el, plural } from "./format.js";

/**
 * @typedef {{ role: "admin" | "tenant", tenant?: string, short?: string, trees: number, tenants?: number,
 *   by_tenant?: Array<{ tenant: string, short: string, trees: number }>, series?: { configured: boolean, setup: string | null } }} Identity
 */

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** Says who the token is: the admin (every tenant) or one tenant, and warns when a key has no trees at all. */
export async function showIdentity() {
  /** @type {Identity} */
  const me = await api("/whoami");
  const badge = $("whoami");
  badge.hidden = false;
  badge.className = `whoami ${me.role}${me.role === "tenant" && me.trees === 0 ? " empty" : ""}`;
  badge.textContent =
    me.role === "admin"
      ? `admin · every tenant · ${plural(me.trees, "tree")} of ${plural(me.tenants ?? 0, "tenant")}`
      : `tenant ${me.short}… · ${plural(me.trees, "tree")}`;
  badge.title =
    me.role === "admin"
      ? "Signed in with the admin token: you see every tenant's trees."
      : `Signed in with an upstream API key: tenant ${me.tenant}, only its own trees.`;
  const empty = me.role === "tenant" && me.trees === 0;
  $("no-trees").hidden = !empty;
  $("no-trees").textContent = empty
    ? "This key has no trees: if you meant the admin token, check it. Any other value is read as an upstream API key, and this one has sent no traffic through the proxy yet."
    : "";
  $("tree-filters").hidden = me.role !== "admin";
  $("stale-all-label").textContent = me.role === "admin" ? "every tenant's trees (admin), not only this one" : "all my trees, not only this one";
  if (me.role === "admin") {
    const select = /** @type {HTMLSelectElement} */ ($("filter-tenant"));
    const chosen = select.value;
    select.replaceChildren(
      el("option", { value: "" }, [`every tenant (${me.tenants})`]),
      ...(me.by_tenant ?? []).map((t) => el("option", { value: t.tenant }, [`${t.short}… (${plural(t.trees, "tree")})`])),
    );
    select.value = chosen;
  }
  return me;
}
