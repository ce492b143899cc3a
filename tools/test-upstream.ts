import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { analyticsRoutes } from "./analytics-upstream";
import { answerKeyRoutes } from "./model-list";
import { faultRoutes } from "./fault-upstream";
import { evalWorkflowScript } from "./eval-workflows/run";
import { refundDeskScript } from "./refund-desk";
import { anthropicRefundDesk, answerMessages, readBody, type AnthropicBody, type AnthropicReply } from "./scripted-anthropic";
import { startScriptedModel, type ChatBody, type ScriptReply, type ScriptedModel } from "./scripted-model";
import { answerResponses, type ResponsesBody } from "./scripted-responses";

/**
 * The upstream for tests: a scripted model whose behaviour is chosen by the
 * request's `model`, so that tests running in workerd can steer it without
 * shared state, and count its generations per model name.
 *
 * - any model: the refund-desk script (tools/refund-desk.ts)
 * - `error-<status>[-...]`: answers that HTTP status with an OpenAI error body
 * - `echo[-...]`: answers the last user message back as text
 * - `fresh[-...]`: answers a new random text every time (a non-deterministic model)
 * - `reasoning[-...]`: the refund desk, with a `reasoning_content` that names the customer of the first user
 *   message (`… for customer <Name>`), as reasoning models write their thoughts beside the answer (JSON only)
 * - `wf-refund[-...]`, `wf-intake[-...]`: the template evaluation's workflows (tools/eval-workflows)
 * - `slow-<ms>[-...]`: answers after a delay
 * - `truncate[-...]`: a stream that stops before `[DONE]`; JSON that is cut short
 *
 * The same steering holds for Anthropic's `POST /v1/messages` (tools/scripted-anthropic.ts,
 * the refund desk in Anthropic's format), which shares the counts. `POST /v1/responses`
 * echoes its input (tools/scripted-responses.ts). Both are answered by a front server on
 * `port` that hands every other request to the scripted chat model.
 *
 * `GET /__count?model=M` answers `{generations, requests}` for that model.
 * `GET /__urls?tag=T` answers the URLs (path and query) of every request that carried
 * the header `x-test-tag: T`, in order, so tests see what reached the upstream.
 * Fault behaviours (hang, stall, drip, garbage streams, reset) live under
 * `/__fault/<kind>/<tag>/v1`, see tools/fault-upstream.ts. A stand-in for Analytics
 * Engine's SQL API lives under `/__analytics/<mode>/<tag>/`, see tools/analytics-upstream.ts.
 */
export async function startTestUpstream(port = 0): Promise<ScriptedModel & { count: (model: string) => { generations: number; requests: number } }> {
  const generations = new Map<string, number>();
  const script = async (body: ChatBody): Promise<ScriptReply> => {
    const model = body.model;
    const status = /^error-(\d{3})/.exec(model);
    if (status)
      return { status: Number(status[1]), body: { error: { message: `scripted ${status[1]}`, type: "server_error", code: `upstream_${status[1]}` } } };
    const slow = /^slow-(\d+)/.exec(model);
    if (slow) await new Promise((r) => setTimeout(r, Number(slow[1])));
    generations.set(model, (generations.get(model) ?? 0) + 1);
    if (model.startsWith("echo")) {
      const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
      return { role: "assistant", content: `echo: ${String(lastUser?.content ?? "")}` };
    }
    if (model.startsWith("fresh")) return { role: "assistant", content: `fresh ${crypto.randomUUID()}` };
    if (model.startsWith("reasoning")) {
      const customer = /for customer (\S+?)\.?$/m.exec(String(body.messages.find((m) => m.role === "user")?.content ?? ""))?.[1] ?? "unknown";
      return { ...refundDeskScript(body), reasoning_content: `The customer is ${customer}; looking at the order first.` };
    }
    return evalWorkflowScript(body) ?? refundDeskScript(body);
  };
  const model = await startScriptedModel({ script, port: 0, truncate: (body) => body.model.startsWith("truncate") });
  const anthropicModels: string[] = [];
  const count = (name: string) => ({
    generations: generations.get(name) ?? 0,
    requests: model.requests.filter((r) => r.model === name).length + anthropicModels.filter((m) => m === name).length,
  });
  model.onGet = (url) => {
    const name = url.searchParams.get("model");
    return url.pathname.endsWith("/__count") && name !== null ? count(name) : undefined;
  };
  const anthropicScript = async (body: AnthropicBody): Promise<AnthropicReply> => {
    const name = body.model;
    const status = /^error-(\d{3})/.exec(name);
    if (status) return { status: Number(status[1]), body: { type: "error", error: { type: "api_error", message: `scripted ${status[1]}` } } };
    const slow = /^slow-(\d+)/.exec(name);
    if (slow) await new Promise((r) => setTimeout(r, Number(slow[1])));
    generations.set(name, (generations.get(name) ?? 0) + 1);
    if (name.startsWith("echo")) {
      const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
      const text = typeof lastUser?.content === "string" ? lastUser.content : (lastUser?.content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
      return { content: [{ type: "text", text: `echo: ${text}` }] };
    }
    if (name.startsWith("fresh")) return { content: [{ type: "text", text: `fresh ${crypto.randomUUID()}` }] };
    return anthropicRefundDesk(body);
  };
  let front: { url: string; close: () => Promise<void> };
  try {
    front = await startFront(port, new URL(model.url).port, {
      messages: (res, body) =>
        answerMessages(res, body, {
          script: anthropicScript,
          onRequest: (b) => anthropicModels.push(b.model),
          truncate: (b) => b.model.startsWith("truncate"),
        }),
      responses: (res, body) => answerResponses(res, body),
    });
  } catch (error) {
    // The port is taken (another Worker project's upstream): leave nothing running behind.
    await model.close();
    throw error;
  }
  const closeInner = model.close;
  const close = async () => {
    await front.close();
    await closeInner();
  };
  return Object.assign(model, { count, url: front.url, close });
}

interface FrontRoutes {
  messages: (res: ServerResponse, body: AnthropicBody) => Promise<void>;
  responses: (res: ServerResponse, body: ResponsesBody) => void;
}

/** The test upstream's one port: Anthropic and Responses routes here, everything else to the chat model. */
async function startFront(port: number, innerPort: string, routes: FrontRoutes): Promise<{ url: string; close: () => Promise<void> }> {
  const agent = new Agent({ keepAlive: true });
  const faults = faultRoutes();
  const analytics = analyticsRoutes();
  const seen = new Map<string, string[]>();
  const keyChecks = { count: 0, revoked: new Set<string>() };
  const server = createServer(async (req, res) => {
    try {
      const tag = req.headers["x-test-tag"];
      if (typeof tag === "string") seen.set(tag, [...(seen.get(tag) ?? []), req.url ?? ""]);
      const url = new URL(req.url ?? "/", "http://localhost");
      if (req.method === "GET" && url.pathname === "/__urls") {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify(seen.get(url.searchParams.get("tag") ?? "") ?? []));
      }
      // Reliability tests: /__fault/<kind>/<tag>/v1/... (tools/fault-upstream.ts)
      if (faults.handle(req, res)) return;
      // GET /api/series: /__analytics/<mode>/<tag>/... (tools/analytics-upstream.ts)
      if (analytics.handle(req, res)) return;
      // Revoked keys and model lists (tools/model-list.ts), for every API behind this port.
      if (answerKeyRoutes(req, res, keyChecks)) return;
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (req.method === "POST" && path.endsWith("/messages")) return await routes.messages(res, JSON.parse(await readBody(req)) as AnthropicBody);
      if (req.method === "POST" && path.endsWith("/responses")) return routes.responses(res, JSON.parse(await readBody(req)) as ResponsesBody);
      proxy(req, res, innerPort, agent);
    } catch (error) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `test upstream failed: ${String(error)}`, type: "server_error" } }));
    }
  });
  server.keepAliveTimeout = 60_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    agent.destroy();
    throw error;
  }
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/v1`,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Relays a request to the inner chat model; a reply cut short upstream is cut short here too. */
function proxy(req: IncomingMessage, res: ServerResponse, port: string, agent: Agent): void {
  const inner = request({ host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers, agent }, (reply) => {
    res.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(res);
    reply.on("close", () => {
      if (!reply.complete) res.destroy();
    });
  });
  inner.on("error", () => res.destroy());
  req.pipe(inner);
}
