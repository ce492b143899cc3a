import type { IncomingMessage, ServerResponse } from "node:http";

/** What a scripted upstream knows about keys: the model-list calls it answered, and the keys revoked since it started. */
export interface KeyState {
  count: number;
  revoked: Set<string>;
  /** The model-list calls answered, by the key they carried (`GET /__model-lists?key=K` answers them). */
  lists?: Map<string, ModelListCall[]>;
}

/** One model-list call: its path, the header (or `?key=`) that carried the key, and its `anthropic-version`. */
export interface ModelListCall {
  path: string;
  via: string;
  anthropicVersion: string | null;
}

/** The key a request carried and how: the first of the credential headers, then `?key=`. */
function sentKey(req: IncomingMessage): { key: string; via: string } | null {
  const url = new URL(req.url ?? "/", "http://localhost");
  for (const name of ["authorization", "x-api-key", "api-key", "x-goog-api-key"]) {
    const value = req.headers[name];
    if (typeof value === "string" && value !== "") return { key: value.replace(/^Bearer\s+/i, "").trim(), via: name };
  }
  const query = url.searchParams.get("key");
  return query ? { key: query, via: "key" } : null;
}

/**
 * What the scripted upstreams say about keys (src/engine/key-freshness.ts re-checks a stale key with
 * `GET …/models`): a key containing `revoked`, or one revoked with `POST /__revoke` (its body the bare key),
 * is one its provider no longer accepts, answered 401 on every route; any other key is accepted.
 */
export function revokedKey(req: IncomingMessage, state: KeyState): boolean {
  const url = new URL(req.url ?? "/", "http://localhost");
  const sent = [
    req.headers.authorization?.replace(/^Bearer\s+/i, ""),
    req.headers["x-api-key"],
    req.headers["api-key"],
    req.headers["x-goog-api-key"],
    url.searchParams.get("key"),
  ];
  return sent.some((value) => typeof value === "string" && (value.includes("revoked") || state.revoked.has(value.trim())));
}

/**
 * Answers a revoked key's request with 401, and `GET …/models` with a model list: true when it answered.
 * `GET /__models?…` counts as a model list too, for tests that count checks; `GET /__model-lists?key=K` answers
 * the model-list calls that carried key K (where, and how the key was sent).
 */
export function answerKeyRoutes(req: IncomingMessage, res: ServerResponse, state: KeyState): boolean {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (req.method === "POST" && path === "/__revoke") {
    let key = "";
    req.on("data", (chunk: Buffer) => (key += chunk.toString("utf8")));
    req.on("end", () => {
      state.revoked.add(key.trim());
      res.writeHead(204);
      res.end();
    });
    return true;
  }
  if (req.method === "GET" && path === "/__model-lists") {
    const key = new URL(req.url ?? "/", "http://localhost").searchParams.get("key") ?? "";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(state.lists?.get(key) ?? []));
    return true;
  }
  const list = req.method === "GET" && path.endsWith("/models");
  if (list) {
    state.count++;
    const sent = sentKey(req);
    if (sent) {
      state.lists ??= new Map();
      const version = req.headers["anthropic-version"];
      state.lists.set(sent.key, [
        ...(state.lists.get(sent.key) ?? []),
        { path, via: sent.via, anthropicVersion: typeof version === "string" ? version : null },
      ]);
    }
  }
  if (revokedKey(req, state)) {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "Incorrect API key provided (revoked).", type: "invalid_request_error", code: "invalid_api_key" } }));
    return true;
  }
  if (!list) return false;
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ object: "list", data: [{ id: "scripted", object: "model" }], models: [{ name: "models/scripted" }] }));
  return true;
}
