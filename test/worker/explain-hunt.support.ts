import { api } from "./api-helpers";
import { chat, eventually } from "./helpers";
import { gemini } from "./gemini.support";
import { postMessages } from "./messages.support";
import { responses } from "./responses.support";

/** A request's row as `GET /api/requests/:id` answers it (the fields these tests read). */
export interface ExplainedRow {
  outcome: string;
  status: number;
  request_id: string;
  reason: string | null;
  tree_id: string | null;
  explanation: {
    kind: string;
    depth: number;
    messages: number;
    tree_id: string;
    divergence: {
      index: number;
      role: string;
      parent: string;
      siblings: number;
      closest: { node: string; role: string } | null;
      field: string | null;
      diff: { before: string; incoming: string; recorded: string; after: string } | null;
    } | null;
    frame: { nearest_tree: string | null; nearest_model: string | null; field: string | null; diff: unknown; trees_compared: number } | null;
    template: string | null;
  } | null;
}

export type Api = "chat" | "responses" | "messages" | "gemini";

/** Sends `body` on `which` API under `key` with `x-request-id: id`; the body is read. */
export async function sendOn(which: Api, model: string, body: Record<string, unknown>, key: string, id: string, headers: Record<string, string> = {}) {
  const h = { "x-request-id": id, ...headers };
  let res: Response;
  if (which === "chat") res = await chat({ model, ...body }, { key, headers: h });
  else if (which === "responses") res = await responses({ model, ...body }, { key, headers: h });
  else if (which === "messages") res = await postMessages({ model, max_tokens: 256, ...body }, { key, headers: h });
  else res = await gemini(model, body, { key, headers: h });
  const text = await res.text();
  return { res, text };
}

/** The request's row once written (rows land with the counters' flush). */
export async function explained(id: string, key: string): Promise<ExplainedRow> {
  let found: ExplainedRow | null = null;
  await eventually(async () => {
    const res = await api(`/requests/${encodeURIComponent(id)}`, { token: key });
    if (res.status !== 200) {
      await res.arrayBuffer();
      return false;
    }
    found = (await res.json<{ data: ExplainedRow }>()).data;
    return true;
  });
  if (!found) throw new Error("never written");
  return found;
}
