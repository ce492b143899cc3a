import { describe, expect, it } from "vitest";
import { GENERAL_CREDENTIALS } from "../../src/core/credential";
import { CREDENTIALS, PROVIDERS } from "../../src/providers";
import { previewColumns } from "../../src/store/tree/node-preview";

/** Every source file's text under src/, by its path there (read at build time, as the architecture test does). */
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob<string>("../../src/**/*.ts", { query: "?raw", import: "default", eager: true })).map(([path, text]) => [
    path.replace("../../src/", ""),
    text,
  ]),
);

/** A source without its comments (block and line), so that only code is searched. */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

describe("the provider registry: a fifth provider is one folder and one line", () => {
  it("Should have every entry supply each piece: routes, format, credential headers, upstream var, node view and preview", () => {
    expect(PROVIDERS.map((p) => p.name)).toEqual(["chat", "messages", "responses", "gemini-openai", "gemini"]);
    for (const p of PROVIDERS) {
      const where = `provider ${p.name}`;
      expect(p.routes.paths.length, where).toBeGreaterThan(0);
      expect(p.format.api === null || typeof p.format.api === "string", where).toBe(true);
      const headers = [...(p.credentials.asSent ?? []), ...(p.credentials.bareKeys ?? []), ...(p.credentials.queryKeys ?? [])];
      expect(headers.length, where).toBeGreaterThan(0);
      expect(p.upstream.name, where).toMatch(/^[A-Z][A-Z0-9_]*_BASE_URL$/);
      expect(new URL(p.upstream.fallback).protocol, where).toBe("https:");
      expect(typeof p.nodeView, where).toBe("function");
      expect(typeof p.preview.piece, where).toBe("function");
      expect(p.preview.callerRoles.length, where).toBeGreaterThan(0);
      expect(Object.values(p.preview.fields).flat().length, where).toBeGreaterThan(0);
    }
  });

  it("Should keep the upstream vars' names and defaults exactly (two APIs of one upstream share one var and one default)", () => {
    // Written out, not imported: deployments set these names, and a default that moves sends keys elsewhere.
    expect(Object.fromEntries(PROVIDERS.map((p) => [p.name, `${p.upstream.name}=${p.upstream.fallback}`]))).toEqual({
      chat: "UPSTREAM_BASE_URL=https://api.openai.com/v1",
      messages: "ANTHROPIC_BASE_URL=https://api.anthropic.com/v1",
      responses: "UPSTREAM_BASE_URL=https://api.openai.com/v1",
      "gemini-openai": "GEMINI_BASE_URL=https://generativelanguage.googleapis.com",
      gemini: "GEMINI_BASE_URL=https://generativelanguage.googleapis.com",
    });
  });

  it("Should check a bare key at its own upstream, sent as that upstream's clients send it (KEY_FRESH_MS for /api reads)", () => {
    const checks = Object.fromEntries(
      PROVIDERS.map((p) => {
        const { id, pathname, keyPrefix } = p.upstream.keyCheck;
        return [p.name, `${id} ${pathname} ${keyPrefix ?? "-"} ${[...p.upstream.keyCheck.headers("K").entries()].map(([k, v]) => `${k}=${v}`).join(",")}`];
      }),
    );
    expect(checks).toEqual({
      chat: "openai /v1/models - authorization=Bearer K",
      messages: "anthropic /v1/models sk-ant- anthropic-version=2023-06-01,x-api-key=K",
      responses: "openai /v1/models - authorization=Bearer K",
      "gemini-openai": "gemini /v1beta/models AIza x-goog-api-key=K",
      gemini: "gemini /v1beta/models AIza x-goog-api-key=K",
    });
    // One id per upstream: credential_checks.provider names the upstream that accepted a key.
    const ids = new Map(PROVIDERS.map((p) => [p.upstream.keyCheck.id, p.upstream.name]));
    expect(ids.size).toBe(new Set(PROVIDERS.map((p) => p.upstream.name)).size);
  });

  it("Should view a stored node through its own provider, in the one shape the dashboard reads", () => {
    const chat = PROVIDERS.find((p) => p.format.api === null);
    const gemini = PROVIDERS.find((p) => p.format.api === "gemini");
    const stored = JSON.stringify({
      role: "assistant",
      content: "On it.",
      tool_calls: [{ id: "call_0", type: "function", function: { name: "refund", arguments: "{}" } }],
    });
    expect(chat?.nodeView(stored)).toEqual({ texts: ["On it."], calls: [{ name: "refund", id: "call_0", args: "{}" }], results: [], refusals: [] });
    const content = JSON.stringify({ role: "model", parts: [{ text: "Looking." }, { functionCall: { name: "get_order", args: { id: "G-8" } } }] });
    expect(gemini?.nodeView(content)).toMatchObject({ texts: ["Looking."], calls: [{ name: "get_order", args: '{"id":"G-8"}' }] });
  });

  it("Should read list previews from the same columns as before the providers declared them, each through the damaged-row guard", () => {
    // The columns of before the registry; since 11-28 each reads the message only when it is JSON (a damaged row
    // previews as empty instead of failing the list: test/worker/fault-hunt.api.test.ts).
    const m = "CASE WHEN json_valid(n.message) THEN n.message END";
    const old = `substr(coalesce(json_extract(${m}, '$.content'), json_extract(${m}, '$.output')), 1, 400) AS content,
    substr(coalesce(json_extract(${m}, '$.tool_calls'), json_extract(${m}, '$.items'), json_extract(${m}, '$.parts')), 1, 2000) AS tool_calls,
    coalesce(json_extract(${m}, '$.tool_call_id'), json_extract(${m}, '$.call_id')) AS tool_call_id`;
    expect(previewColumns("n.")).toBe(old);
  });

  /**
   * The literals that name one provider (its frame's API, its upstream var, the credential headers only its
   * clients send) may appear only in src/providers/, but for these, each with its reason.
   */
  const ALLOWED: Record<string, { literal: string; why: string }[]> = {
    "upstream/forward.ts": [
      // forward.ts is below the providers (it imports only core and the log): it cannot read the registry.
      { literal: "GEMINI_BASE_URL", why: "Google's base URL names no API version, and x-goog-api-key goes to it only: a var-keyed rule" },
      { literal: "x-goog-api-key", why: "the one credential header dropped on the way to any other upstream (docs/compat.md, Gateways)" },
      { literal: "UPSTREAM_BASE_URL", why: "the var named in the unreachable envelope when a caller names none" },
    ],
    "core/credential.ts": [{ literal: "api-key", why: "a gateway's query parameter (Gravitee's ?api-key=), not Azure's header: one name, two places" }],
    "engine/key-freshness.ts": [{ literal: "api-key", why: "an Azure deployment base reads a key check's key from api-key only (docs/deploy.md)" }],
  };

  it("Should name no provider outside src/providers/ but for the allow-list, and import no provider's folder from outside", () => {
    const general = new Set([...(GENERAL_CREDENTIALS.asSent ?? []), ...(GENERAL_CREDENTIALS.bareKeys ?? [])]);
    const names = [
      ...new Set(
        PROVIDERS.flatMap((p) => [p.format.api, p.upstream.name, ...(p.credentials.asSent ?? []), ...(p.credentials.bareKeys ?? [])]).filter(
          (n): n is string => n !== null && !general.has(n),
        ),
      ),
    ];
    // Written out too, so that a provider that stops declaring one is seen here.
    expect(names.sort()).toEqual([
      "ANTHROPIC_BASE_URL",
      "GEMINI_BASE_URL",
      "UPSTREAM_BASE_URL",
      "anthropic",
      "api-key",
      "gemini",
      "openai-responses",
      "x-api-key",
      "x-goog-api-key",
    ]);
    const found: string[] = [];
    for (const [path, text] of Object.entries(sources)) {
      if (path.startsWith("providers/")) continue;
      const code = codeOf(text);
      for (const name of names) {
        if (!code.includes(`"${name}"`)) continue;
        if (ALLOWED[path]?.some((a) => a.literal === name)) continue;
        found.push(`${path}: "${name}"`);
      }
    }
    expect(found).toEqual([]);
    // Each allowance is still needed (and the search finds what it looks for): a stale one must go.
    for (const [path, allowed] of Object.entries(ALLOWED))
      for (const a of allowed) expect(codeOf(sources[path]), `${path} ${a.why}`).toContain(`"${a.literal}"`);
    expect(CREDENTIALS.bareKeys).toContain("x-goog-api-key");

    const imports = Object.entries(sources).flatMap(([path, text]) =>
      path.startsWith("providers/")
        ? []
        : [...text.matchAll(/from "(?:\.\.\/)+providers\/(chat|anthropic|responses|gemini)\/([^"]+)"/g)].map((m) => `${path} -> ${m[1]}/${m[2]}`),
    );
    expect(imports.sort()).toEqual([
      // The engine's templates serve only APIs keyed as chat is: their key type is chat's.
      "engine/templates.ts -> chat/key",
      // The types of the node API's messages (a union over the providers' message shapes).
      "store/trajectories/messages.ts -> anthropic/message-view",
      "store/trajectories/messages.ts -> chat/message-view",
    ]);
  });
});
