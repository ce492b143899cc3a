import type { IncomingMessage, ServerResponse } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";

/**
 * Faulty upstream behaviours for the reliability tests, reached through the
 * test upstream's port by a base URL path rather than a model name, so that
 * the request body is never read before it is relayed:
 *
 *   UPSTREAM_BASE_URL = http://127.0.0.1:PORT/__fault/<kind>/<tag>/v1
 *
 * - `hang`: reads the request and never answers.
 * - `stall`: answers 200 and one SSE chunk, then never sends another byte.
 * - `drip`: a well-formed stream of 2,000 chunks, one every 20 ms (about 40 s).
 * - `garbage`: a 200 stream whose events are not JSON, ended with `[DONE]`.
 * - `error-event`: a 200 stream that carries an `error` event, ended with `[DONE]`.
 * - `no-finish`: a 200 stream that ends with `[DONE]` but never gives a finish reason.
 * - `html`: a 200 `text/html` page instead of a completion.
 * - `reset`: destroys the connection without answering.
 * - `cut-json`: a 200 JSON answer whose body is cut after its first bytes (the connection is destroyed).
 * - `stall-json`: a 200 JSON answer that sends its headers and first bytes, then never another byte.
 * - `<gzip|br|deflate|x-custom>-<json|sse>`: a complete answer (a completion, or a chunk stream), compressed and
 *   sent with that `content-encoding` and its compressed `content-length` (`x-custom`: the bytes as they are,
 *   an encoding no client knows).
 *
 * `GET /__fault/stats/<tag>` answers `{requests, closedEarly, completed}` for
 * that tag: `closedEarly` counts requests whose connection the caller closed
 * before the fault finished, which is how tests see that a fetch was cancelled.
 */
export interface FaultRoutes {
  /** Handles `req` when it is a fault route; false when it is not one. */
  handle: (req: IncomingMessage, res: ServerResponse) => boolean;
}

interface Stats {
  requests: number;
  closedEarly: number;
  completed: number;
}

const ROUTE = /^\/__fault\/([a-z-]+)\/([A-Za-z0-9_-]+)\//;
const STATS = /^\/__fault\/stats\/([A-Za-z0-9_-]+)$/;

function chunk(content: string, finish: string | null = null): string {
  const body = {
    id: "chatcmpl-fault",
    object: "chat.completion.chunk",
    created: 1,
    model: "fault",
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/** Creates the fault routes with their per-tag statistics. */
export function faultRoutes(): FaultRoutes {
  const stats = new Map<string, Stats>();
  const of = (tag: string): Stats => {
    let s = stats.get(tag);
    if (!s) stats.set(tag, (s = { requests: 0, closedEarly: 0, completed: 0 }));
    return s;
  };

  const run = (kind: string, s: Stats, req: IncomingMessage, res: ServerResponse): void => {
    let finished = false;
    const finish = () => {
      finished = true;
      s.completed++;
    };
    res.on("close", () => {
      if (!finished) s.closedEarly++;
    });
    const sse = () => res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const encoded = /^(gzip|br|deflate|x-custom)-(json|sse)$/.exec(kind);
    if (encoded) {
      const [, encoding, form] = encoded;
      const message = { role: "assistant", content: `Encoded ${encoding}.` };
      const text =
        form === "json"
          ? JSON.stringify({
              id: "chatcmpl-enc",
              object: "chat.completion",
              created: 1,
              model: "fault",
              choices: [{ index: 0, message, finish_reason: "stop" }],
            })
          : `${chunk(message.content)}${chunk("", "stop")}data: [DONE]\n\n`;
      const compress = { gzip: gzipSync, br: brotliCompressSync, deflate: deflateSync }[encoding];
      const body = compress ? compress(Buffer.from(text)) : Buffer.from(text);
      const type = form === "json" ? "application/json" : "text/event-stream";
      res.writeHead(200, { "content-type": type, "content-encoding": encoding, "content-length": String(body.length) });
      finish();
      return void res.end(body);
    }
    switch (kind) {
      case "hang":
        return;
      case "stall":
        sse();
        res.write(chunk("partial ans"));
        return;
      case "drip": {
        sse();
        let i = 0;
        const timer = setInterval(() => {
          if (res.destroyed) return clearInterval(timer);
          if (i++ < 2000) return void res.write(chunk("x"));
          clearInterval(timer);
          res.write(chunk("", "stop"));
          finish();
          res.end("data: [DONE]\n\n");
        }, 20);
        res.on("close", () => clearInterval(timer));
        return;
      }
      case "garbage":
        sse();
        finish();
        return void res.end("data: {not json\n\ndata: [DONE]\n\n");
      case "error-event":
        sse();
        res.write(chunk("half"));
        res.write(`data: ${JSON.stringify({ error: { message: "overloaded mid-stream", type: "server_error" } })}\n\n`);
        finish();
        return void res.end("data: [DONE]\n\n");
      case "no-finish":
        sse();
        res.write(chunk("no finish reason"));
        finish();
        return void res.end("data: [DONE]\n\n");
      case "html":
        res.writeHead(200, { "content-type": "text/html" });
        finish();
        return void res.end("<html><body>502 Bad Gateway (from a proxy in front of the model)</body></html>");
      case "reset":
        finish();
        return void req.socket.destroy();
      case "cut-json":
        res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
        res.write('{"id":"chatcmpl-cut","object":"chat.completion","choices":[{"index":0,"message":{"role":"assis');
        finish();
        return void setTimeout(() => req.socket.destroy(), 20);
      case "stall-json":
        res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
        return void res.write('{"id":"chatcmpl-stall","object":"chat.completion","choices":[');
      default:
        res.writeHead(404, { "content-type": "application/json" });
        finish();
        res.end(JSON.stringify({ error: { message: `no fault '${kind}'`, type: "invalid_request_error" } }));
    }
  };

  return {
    handle(req, res) {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const statsMatch = STATS.exec(path);
      if (req.method === "GET" && statsMatch) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(of(statsMatch[1])));
        return true;
      }
      const match = ROUTE.exec(path);
      if (!match) return false;
      const s = of(match[2]);
      s.requests++;
      // Read the request body fully first, as a real model server does.
      req.resume();
      req.on("end", () => run(match[1], s, req, res));
      return true;
    },
  };
}
