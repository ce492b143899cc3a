import { isObject, tryParseJson } from "../json.js";
import { keyString } from "../steps.js";
import type { SkillKey, Trajectory, TrajectoryStore } from "../types.js";
import { fromLine, skillModel, toLine } from "./wire.js";

export interface RemoteStoreOptions {
  /** The Worker's origin, e.g. `https://muscle-mem.example.workers.dev`. */
  baseUrl: string;
  /** Skills are shared by every engine that uses the same namespace (and tenant). */
  namespace: string;
  /** The admin token, or the tenant's upstream API key. */
  token: string;
  /** Per-request timeout. Default 10 000 ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The error the store rejects with when the Worker answers with an error status. */
export class RemoteStoreError extends Error {
  constructor(readonly status: number, message: string) {
    super(`muscle-mem remote store: ${status} ${message}`);
    this.name = "RemoteStoreError";
  }
}

/**
 * Stores trajectories in the muscle-mem Worker through its trajectory API
 * (docs/api.md), so engines on different machines share their skills. Each
 * skill is a tree in the namespace; recording is `POST /api/import`, reading
 * is `GET /api/trees?namespace=` then `GET /api/trees/:id/export`.
 *
 * @example
 * const store = new RemoteStore({ baseUrl: "http://127.0.0.1:8787", namespace: "robot-arm", token: process.env.MM_TOKEN! });
 * const engine = new Engine({ store });
 */
export class RemoteStore implements TrajectoryStore {
  private readonly base: string;
  private readonly fetcher: typeof fetch;
  /** Tree ids per skill model, once seen. Trees only disappear when pruned. */
  private readonly treeIds = new Map<string, Set<string>>();

  constructor(private readonly options: RemoteStoreOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.fetcher = options.fetch ?? fetch;
  }

  async query(key: SkillKey): Promise<Trajectory[]> {
    const model = await skillModel(key);
    const wanted = keyString(key);
    const out: Trajectory[] = [];
    for (const treeId of await this.findTrees(model)) {
      const response = await this.request(`/api/trees/${encodeURIComponent(treeId)}/export`, {}, [404]);
      if (response.status === 404) {
        this.treeIds.get(model)?.delete(treeId); // pruned since we looked
        continue;
      }
      for (const line of (await response.text()).split("\n")) {
        if (!line.trim()) continue;
        const trajectory = fromLine(tryParseJson(line));
        if (trajectory && keyString(trajectory.key) === wanted) out.push(trajectory);
      }
    }
    return out;
  }

  async add(trajectory: Trajectory): Promise<void> {
    const model = await skillModel(trajectory.key);
    await this.request("/api/import", {
      method: "POST",
      headers: { "content-type": "application/x-ndjson", "muscle-mem-namespace": this.options.namespace },
      body: `${JSON.stringify(toLine(trajectory, model))}\n`,
    });
    this.treeIds.delete(model); // a first recording creates the tree: look it up again next time
  }

  private async findTrees(model: string): Promise<Set<string>> {
    const known = this.treeIds.get(model);
    if (known && known.size > 0) return known;
    const found = new Set<string>();
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ namespace: this.options.namespace, limit: "100" });
      if (cursor) query.set("cursor", cursor);
      const body = tryParseJson(await (await this.request(`/api/trees?${query}`)).text());
      if (!isObject(body) || !Array.isArray(body.data)) throw new RemoteStoreError(200, "unexpected /api/trees body");
      for (const tree of body.data) {
        if (!isObject(tree) || typeof tree.id !== "string" || tree.model !== model) continue;
        if (typeof tree.namespace === "string" && tree.namespace !== this.options.namespace) continue;
        found.add(tree.id);
      }
      cursor = typeof body.next_cursor === "string" && body.next_cursor ? body.next_cursor : undefined;
    } while (cursor);
    this.treeIds.set(model, found);
    return found;
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
