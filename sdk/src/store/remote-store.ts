import { UsageError } from "../errors.js";
import { isObject, tryParseJson } from "../json.js";
import { keyString } from "../steps.js";
import type { SkillKey, Trajectory, TrajectoryStore } from "../types.js";
import { fromLine, skillModel, toLine } from "./wire.js";

export interface RemoteStoreOptions {
  /** The Worker's origin, e.g. `https://muscle-mem.example.workers.dev`. */
  baseUrl: string;
  /** Skills are shared by every engine that uses the same namespace and tenant. */
  namespace: string;
  /** The tenant's upstream API key (it is the tenant), or the admin token together with `tenant`. */
  token: string;
  /**
   * The tenant id (32 hex characters; `GET /api/whoami` with the tenant's key
   * shows it) whose skills to read and record. Required with the admin token,
   * which is not a tenant; with a key, it must be the key's own tenant.
   */
  tenant?: string;
  /** Per-request timeout. Default 10 000 ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The error the store rejects with when the Worker answers with an error status. */
export class RemoteStoreError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`muscle-mem remote store: ${status} ${message}`);
    this.name = "RemoteStoreError";
  }
}

interface Exported {
  nodeCount: number;
  trajectories: Trajectory[];
}

/**
 * Stores trajectories in the muscle-mem Worker through its trajectory API
 * (docs/api.md), so engines on different machines share their skills. Each
 * skill is one tree of the tenant's namespace (its frame model names the skill
 * key); recording is `POST /api/import`. Reading finds the skill's tree once
 * (`GET /api/trees?namespace=&tenant=`), then checks its node count with
 * `GET /api/trees/:id` on each call and exports it only when it changed.
 *
 * @example
 * const store = new RemoteStore({ baseUrl: "http://127.0.0.1:8787", namespace: "robot-arm", token: process.env.MM_KEY! });
 * const engine = new Engine({ store });
 */
export class RemoteStore implements TrajectoryStore {
  private readonly base: string;
  private readonly fetcher: typeof fetch;
  private scope?: Promise<{ tenant: string; admin: boolean }>;
  /** The tree id of each skill model, once found. Trees only disappear when pruned. */
  private readonly treeIds = new Map<string, string>();
  private readonly exported = new Map<string, Exported>();

  constructor(private readonly options: RemoteStoreOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.fetcher = options.fetch ?? fetch;
  }

  async query(key: SkillKey): Promise<Trajectory[]> {
    const model = await skillModel(key);
    const treeId = await this.findTree(model);
    if (!treeId) return [];
    const summary = await this.request(`/api/trees/${encodeURIComponent(treeId)}`, {}, [404]);
    const body = summary.status === 404 ? undefined : tryParseJson(await summary.text());
    if (!isObject(body) || typeof body.node_count !== "number") {
      this.forget(model, treeId); // pruned since we looked
      return [];
    }
    let cached = this.exported.get(treeId);
    if (!cached || cached.nodeCount !== body.node_count) {
      cached = { nodeCount: body.node_count, trajectories: await this.export(treeId) };
      this.exported.set(treeId, cached);
    }
    const wanted = keyString(key);
    return cached.trajectories.filter((t) => keyString(t.key) === wanted).map((t) => structuredClone(t));
  }

  async add(trajectory: Trajectory): Promise<void> {
    const { tenant, admin } = await this.tenant();
    const model = await skillModel(trajectory.key);
    const query = admin ? `?${new URLSearchParams({ tenant })}` : "";
    await this.request(`/api/import${query}`, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson", "muscle-mem-namespace": this.options.namespace },
      body: `${JSON.stringify(toLine(trajectory, model))}\n`,
    });
  }

  /** The one tenant this store reads and records; the admin token must name it. */
  private tenant(): Promise<{ tenant: string; admin: boolean }> {
    this.scope ??= this.whoami().catch((error: unknown) => {
      this.scope = undefined; // a network failure is retried next time; a usage error repeats
      throw error;
    });
    return this.scope;
  }

  private async whoami(): Promise<{ tenant: string; admin: boolean }> {
    const body = tryParseJson(await (await this.request("/api/whoami")).text());
    if (!isObject(body)) throw new RemoteStoreError(200, "unexpected /api/whoami body");
    const named = this.options.tenant;
    if (body.role === "admin") {
      if (!named) {
        throw new UsageError(
          "muscle-mem remote store: the admin token is not a tenant, and would read and record every tenant's skills. " +
            'Name the tenant: new RemoteStore({ ..., tenant: "<tenant id>" }) (GET /api/whoami with its key shows the id), ' +
            "or use the tenant's own API key as the token",
        );
      }
      return { tenant: named, admin: true };
    }
    if (typeof body.tenant !== "string") throw new RemoteStoreError(200, "unexpected /api/whoami body");
    if (named && named !== body.tenant) {
      throw new UsageError(
        `muscle-mem remote store: this key belongs to tenant ${body.tenant}, not to the tenant option ${named}; drop the option or use that tenant's key`,
      );
    }
    return { tenant: body.tenant, admin: false };
  }

  private forget(model: string, treeId: string): void {
    this.treeIds.delete(model);
    this.exported.delete(treeId);
  }

  private async findTree(model: string): Promise<string | undefined> {
    const known = this.treeIds.get(model);
    if (known) return known;
    const { tenant, admin } = await this.tenant();
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ namespace: this.options.namespace, limit: "200" });
      if (admin) query.set("tenant", tenant);
      if (cursor) query.set("cursor", cursor);
      const body = tryParseJson(await (await this.request(`/api/trees?${query}`)).text());
      if (!isObject(body) || !Array.isArray(body.data)) throw new RemoteStoreError(200, "unexpected /api/trees body");
      for (const tree of body.data) {
        if (!isObject(tree) || typeof tree.id !== "string" || tree.model !== model) continue;
        if (tree.namespace !== this.options.namespace || tree.tenant !== tenant) continue;
        this.treeIds.set(model, tree.id);
        return tree.id;
      }
      cursor = typeof body.next_cursor === "string" && body.next_cursor ? body.next_cursor : undefined;
    } while (cursor);
    return undefined;
  }

  /** Every SDK trajectory in the tree, following the export's pages. */
  private async export(treeId: string): Promise<Trajectory[]> {
    const out: Trajectory[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?${new URLSearchParams({ cursor })}` : "";
      const response = await this.request(`/api/trees/${encodeURIComponent(treeId)}/export${query}`);
      for (const line of (await response.text()).split("\n")) {
        const trajectory = line.trim() ? fromLine(tryParseJson(line)) : undefined;
        if (trajectory) out.push(trajectory);
      }
      cursor = response.headers.get("muscle-mem-next-cursor");
    } while (cursor);
    return out;
  }

  private async request(path: string, init: RequestInit = {}, allow: number[] = []): Promise<Response> {
    const response = await this.fetcher(this.base + path, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${this.options.token}` },
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
    });
    if (response.ok || allow.includes(response.status)) return response;
    const body = tryParseJson(await response.text().catch(() => ""));
    const error = isObject(body) && isObject(body.error) ? body.error.message : undefined;
    throw new RemoteStoreError(response.status, typeof error === "string" ? error : response.statusText);
  }
}
