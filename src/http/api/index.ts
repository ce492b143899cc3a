import { Hono } from "hono";
import { requireCaller, type AuthVariables } from "../auth/middleware";
import { exportQuery, getExport } from "./export";
import { postMove } from "./move";
import { postImport } from "./import";
import { getNode, getPath } from "./nodes";
import { deleteNode, getNodePrune, postPrune } from "./prune";
import { getSeries } from "./series";
import { getStats } from "./stats";
import { getSubtree, subtreeQuery } from "./subtree";
import { getTemplates } from "./templates";
import { treeAccess } from "./tree-access";
import { childrenQuery, getChildren, getSearch, getTree, getTrees, searchQuery } from "./trees";
import { getWhoami } from "./whoami";
import { apiHeaders } from "./headers";
import { getRequest, getRequests } from "./requests";
import type { ApiCtx } from "./params";
import { methodCheck, type RouteSpec } from "./methods";

/**
 * The routes that need only the caller (each handler scopes what it reads or writes itself): method, path, handler.
 * Registered in this order, after the tree routes.
 */
const CALLER_ROUTES: readonly (readonly [method: "GET" | "POST" | "DELETE", path: string, handler: (c: ApiCtx) => Promise<Response>])[] = [
  ["GET", "/trees", getTrees],
  // Admin only (move.ts); a tree's other routes pass treeAccess below.
  ["POST", "/trees/:treeId/move", postMove],
  ["GET", "/nodes/:hash", getNode],
  ["GET", "/nodes/:hash/path", getPath],
  ["GET", "/nodes/:hash/prune", getNodePrune],
  ["DELETE", "/nodes/:hash", deleteNode],
  ["POST", "/import", postImport],
  ["POST", "/prune", postPrune],
  ["GET", "/stats", getStats],
  ["GET", "/series", getSeries],
  ["GET", "/whoami", getWhoami],
  ["GET", "/requests", getRequests],
  ["GET", "/requests/:id{.+}", getRequest],
];

/** The routes that name a tree and pass treeAccess (registered first, all GET). */
const TREE_ROUTES: readonly RouteSpec[] = [
  ["GET", "/trees/:treeId"],
  ["GET", "/trees/:treeId/children"],
  ["GET", "/trees/:treeId/subtree"],
  ["GET", "/trees/:treeId/export"],
  ["GET", "/trees/:treeId/templates"],
  ["GET", "/trees/:treeId/search"],
];

/** The trajectory API (docs/api.md), mounted under /api. Every route needs a bearer credential; every response carries API_HEADERS. */
export function apiRoutes(): Hono<{ Bindings: Env; Variables: AuthVariables }> {
  const api = new Hono<{ Bindings: Env; Variables: AuthVariables }>();
  api.use("*", apiHeaders());
  // A wrong method on a known path is a 405 with Allow (OPTIONS a 204), before any credential is read.
  api.use("*", methodCheck([...TREE_ROUTES, ...CALLER_ROUTES.map(([method, path]) => [method, path] as const)], "/api"));
  api.use("*", requireCaller());
  // Every :treeId route but the admin-only move passes the one tree check (tree-access.ts), after its query.
  api.get("/trees/:treeId", treeAccess(), getTree);
  api.get("/trees/:treeId/children", childrenQuery, treeAccess(), getChildren);
  api.get("/trees/:treeId/subtree", subtreeQuery, treeAccess(), getSubtree);
  api.get("/trees/:treeId/export", exportQuery, treeAccess(), getExport);
  api.get("/trees/:treeId/templates", treeAccess(), getTemplates);
  api.get("/trees/:treeId/search", searchQuery, treeAccess(), getSearch);
  for (const [method, path, handler] of CALLER_ROUTES) api.on(method, path, handler);
  return api;
}
