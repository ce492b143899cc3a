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

/** The trajectory API (docs/api.md), mounted under /api. Every route needs a bearer credential; every response carries API_HEADERS. */
export function apiRoutes(): Hono<{ Bindings: Env; Variables: AuthVariables }> {
  const api = new Hono<{ Bindings: Env; Variables: AuthVariables }>();
  api.use("*", apiHeaders());
  api.use("*", requireCaller());
  api.get("/trees", getTrees);
  // Every :treeId route but the admin-only move passes the one tree check (tree-access.ts), after its query.
  api.get("/trees/:treeId", treeAccess(), getTree);
  api.get("/trees/:treeId/children", childrenQuery, treeAccess(), getChildren);
  api.get("/trees/:treeId/subtree", subtreeQuery, treeAccess(), getSubtree);
  api.get("/trees/:treeId/export", exportQuery, treeAccess(), getExport);
  api.get("/trees/:treeId/templates", treeAccess(), getTemplates);
  api.get("/trees/:treeId/search", searchQuery, treeAccess(), getSearch);
  api.post("/trees/:treeId/move", postMove);
  api.get("/nodes/:hash", getNode);
  api.get("/nodes/:hash/path", getPath);
  api.get("/nodes/:hash/prune", getNodePrune);
  api.delete("/nodes/:hash", deleteNode);
  api.post("/import", postImport);
  api.post("/prune", postPrune);
  api.get("/stats", getStats);
  api.get("/series", getSeries);
  api.get("/whoami", getWhoami);
  api.get("/requests", getRequests);
  api.get("/requests/:id{.+}", getRequest);
  return api;
}
