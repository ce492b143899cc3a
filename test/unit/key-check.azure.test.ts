import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import { AZURE_CHECK_API_VERSION, azureResource, checkRequest, keyCheckTarget } from "../../src/engine/key-freshness";
import { upstreamUrl } from "../../src/upstream/forward";

/** The URL a stale key's check fetches, as forward() builds it. */
const checkUrl = (base: string, pathname: string, url: string, baseVar?: string) => {
  const r = checkRequest({ base, pathname, url, headers: new Headers(), baseVar });
  return upstreamUrl(r.base, r.pathname, r.search, baseVar === "GEMINI_BASE_URL");
};

describe("where a stale key is checked (KEY_FRESH_MS)", () => {
  it("Should find the resource root of an Azure OpenAI deployment base, and of nothing else", () => {
    expect(azureResource("https://r.openai.azure.com/openai/deployments/gpt-4o")).toBe("https://r.openai.azure.com/openai");
    expect(azureResource("https://r.cognitiveservices.azure.com/openai/deployments/gpt-4o/")).toBe("https://r.cognitiveservices.azure.com/openai");
    // An API Management prefix before it is kept: the check goes through the same front door.
    expect(azureResource("https://apim.example/team-a/openai/deployments/x")).toBe("https://apim.example/team-a/openai");
    for (const base of [
      "https://api.openai.com/v1",
      "https://r.openai.azure.com/openai/v1",
      "https://r.openai.azure.com/openai/deployments",
      "https://r.openai.azure.com/openai/deployments/x/extra",
      "https://gw.example/openai/deployments/x?token=1",
    ]) {
      expect(azureResource(base), base).toBeNull();
    }
  });

  it("Should ask an Azure deployment's resource model list at a GA api-version, keeping the request's other parameters", () => {
    const base = "https://r.openai.azure.com/openai/deployments/gpt-4o";
    expect(checkUrl(base, "/v1/chat/completions", "http://mm.test/v1/chat/completions?api-version=2023-05-15")).toBe(
      `https://r.openai.azure.com/openai/models?api-version=${AZURE_CHECK_API_VERSION}`,
    );
    expect(checkUrl(base, "/v1/chat/completions", "http://mm.test/v1/chat/completions?subscription-key=s1")).toBe(
      `https://r.openai.azure.com/openai/models?subscription-key=s1&api-version=${AZURE_CHECK_API_VERSION}`,
    );
    // An /api caller's check (no request query).
    expect(checkUrl(base, "/v1/models", "http://api.invalid/")).toBe(`https://r.openai.azure.com/openai/models?api-version=${AZURE_CHECK_API_VERSION}`);
  });

  it("Should ask every other base's own model list with the request's query, as before", () => {
    expect(checkUrl("https://api.openai.com/v1", "/v1/chat/completions", "http://mm.test/v1/chat/completions?beta=true")).toBe(
      "https://api.openai.com/v1/models?beta=true",
    );
    expect(checkUrl("https://r.openai.azure.com/openai/v1", "/v1/chat/completions", "http://mm.test/v1/chat/completions")).toBe(
      "https://r.openai.azure.com/openai/v1/models",
    );
    expect(
      checkUrl("https://generativelanguage.googleapis.com", "/v1beta/models/m:streamGenerateContent", "http://mm.test/x?alt=sse&key=k", "GEMINI_BASE_URL"),
    ).toBe("https://generativelanguage.googleapis.com/v1beta/models?key=k");
  });
});

describe("an /api caller's key at an Azure OpenAI deployment base", () => {
  const { config } = parseConfig({ UPSTREAM_BASE_URL: "https://r.openai.azure.com/openai/deployments/gpt-4o" });
  it("Should send an API key in api-key (Azure reads a bearer token as an Entra token) and an Entra token (a JWT) as a bearer", () => {
    const key = keyCheckTarget(config, "0123456789abcdef0123456789abcdef", undefined);
    expect([...key.headers]).toEqual([["api-key", "0123456789abcdef0123456789abcdef"]]);
    const entra = keyCheckTarget(config, "eyJhbGciOi.x.y", undefined);
    expect([...entra.headers]).toEqual([["authorization", "Bearer eyJhbGciOi.x.y"]]);
  });

  it("Should keep every other base's check as it was: OpenAI's bearer, Anthropic's x-api-key", () => {
    const openai = keyCheckTarget(parseConfig({}).config, "sk-1", undefined);
    expect([...openai.headers]).toEqual([["authorization", "Bearer sk-1"]]);
    expect(keyCheckTarget(config, "sk-ant-1", undefined).headers.get("x-api-key")).toBe("sk-ant-1");
  });
});
