import { describe, expect, it } from "vitest";
import { credentialOf, credentialReader, GENERAL_CREDENTIALS, tenantOfRequest } from "../../src/core/credential";
import { tenantOf } from "../../src/core/hash";
import { CREDENTIALS } from "../../src/providers";

const url = (search = "") => new URL(`http://mm.test/v1/chat/completions${search}`);
const tenant = (headers: Record<string, string>, search = "", anonymous = false) => tenantOfRequest(new Headers(headers), url(search), anonymous, CREDENTIALS);

describe("credentialOf / tenantOfRequest", () => {
  it("Should keep the tenant of Authorization: Bearer sk-x exactly as it always was", () => {
    // Pinned: existing deployments keep their trees only while this value stays.
    expect(tenant({ authorization: "Bearer sk-x" })).toBe("ff09d230c6ecb12d27d7511839366726");
    expect(tenant({ authorization: "Bearer sk-x" })).toBe(tenantOf("Bearer sk-x"));
    expect(tenant({ authorization: "Basic dXNlcjpwYXNz" })).toBe(tenantOf("Basic dXNlcjpwYXNz"));
  });

  it("Should keep Anthropic's x-api-key tenant as the Messages route derived it (Bearer <key>)", () => {
    expect(tenant({ "x-api-key": "sk-ant-1" })).toBe(tenantOf("Bearer sk-ant-1"));
  });

  it("Should read api-key, x-goog-api-key and the key query parameter as Bearer <key>", () => {
    expect(tenant({ "api-key": "k1" })).toBe(tenantOf("Bearer k1"));
    expect(tenant({ "x-goog-api-key": "k1" })).toBe(tenantOf("Bearer k1"));
    expect(tenant({}, "?key=k1&alt=sse")).toBe(tenantOf("Bearer k1"));
  });

  it("Should count a gateway's or proxy's credential: alone it is the tenant, beside a provider key it splits the tenant", () => {
    expect(tenant({ "cf-aig-authorization": "Bearer gw-1" })).toBe(tenantOf("Bearer gw-1"));
    expect(tenant({ "cf-aig-authorization": "Bearer gw-1" })).not.toBe(tenant({ "cf-aig-authorization": "Bearer gw-2" }));
    expect(tenant({ "ocp-apim-subscription-key": "sub-1" })).toBe(tenantOf("Bearer sub-1"));
    expect(tenant({ "proxy-authorization": "Basic cHJveHk6cGFzcw==" })).toBe(tenantOf("Basic cHJveHk6cGFzcw=="));
    const provider = tenant({ authorization: "Bearer sk-a" });
    expect(tenant({ authorization: "Bearer sk-a", "cf-aig-authorization": "Bearer gw-1" })).not.toBe(provider);
    expect(tenant({ authorization: "Bearer sk-a", "cf-aig-authorization": "Bearer gw-1" })).not.toBe(
      tenant({ authorization: "Bearer sk-a", "cf-aig-authorization": "Bearer gw-2" }),
    );
    expect(tenant({ authorization: "Bearer sk-a", "ocp-apim-subscription-key": "sub-1" })).not.toBe(
      tenant({ authorization: "Bearer sk-a", "ocp-apim-subscription-key": "sub-2" }),
    );
    expect(tenant({ authorization: "Bearer sk-a", "proxy-authorization": "Basic eA==" })).not.toBe(provider);
    // With CACHE_ANONYMOUS on, two gateway tokens without a provider key must not share the anonymous tenant.
    expect(tenant({ "cf-aig-authorization": "Bearer gw-1" }, "", true)).not.toBe(tenant({}, "", true));
  });

  it("Should put every different credential in the tenant, in any order, and one key given twice once", () => {
    const both = tenant({ authorization: "Bearer a", "api-key": "b" });
    expect(both).not.toBe(tenant({ authorization: "Bearer a" }));
    expect(both).not.toBe(tenant({ "api-key": "b" }));
    expect(both).not.toBe(tenant({ authorization: "Bearer a", "api-key": "c" }));
    // The same two keys in each other's header are the same two keys: one owner holds both.
    expect(tenant({ authorization: "Bearer b", "api-key": "a" })).toBe(both);
    expect(tenant({ "api-key": "b", authorization: "Bearer a" })).toBe(both);
    expect(tenant({ authorization: "Bearer a", "x-api-key": "a" })).toBe(tenantOf("Bearer a"));
  });

  it("Should find no credential in no header, empty headers or an empty key parameter", () => {
    expect(credentialOf(new Headers(), url(), CREDENTIALS)).toBeNull();
    expect(credentialOf(new Headers({ authorization: "", "api-key": " ", "x-api-key": "" }), url("?key="), CREDENTIALS)).toBeNull();
    expect(tenant({})).toBeNull();
  });

  it("Should read exactly the credentials it always read, now gathered from the providers' registry entries", () => {
    // Written out here, not imported: a tenant is keyed by these, so a provider that stops declaring one (or a
    // new one that adds a header) must be seen in review. Order is irrelevant (credentialOf sorts what it finds).
    expect(new Set(CREDENTIALS.asSent)).toEqual(new Set(["authorization", "proxy-authorization", "cf-aig-authorization"]));
    expect(new Set(CREDENTIALS.bareKeys)).toEqual(new Set(["api-key", "x-api-key", "x-goog-api-key", "ocp-apim-subscription-key"]));
    // Azure API Management's subscription key in its query form since 11-28 (test/worker/tenant-hunt.test.ts).
    // An API gateway's consumer key in the query (Kong's `apikey`, Gravitee's `api-key`) since 11-28 (test/worker/tenant-hunt2.test.ts).
    expect(new Set(CREDENTIALS.queryKeys)).toEqual(new Set(["subscription-key", "apikey", "api-key", "key"]));
  });

  it("Should read only the credentials it is handed", () => {
    const headers = new Headers({ "x-api-key": "k1", "x-goog-api-key": "k2" });
    expect(credentialOf(headers, url("?key=k3"), credentialReader([{ bareKeys: ["X-Api-Key"] }]))).toBe("Bearer k1");
    expect(credentialOf(headers, url("?key=k3"), credentialReader([{ queryKeys: ["key"] }]))).toBe("Bearer k3");
    expect(credentialOf(headers, url(), credentialReader([GENERAL_CREDENTIALS]))).toBeNull();
  });

  it("Should give anonymous traffic a tenant of its own only when asked to", () => {
    const anonymous = tenant({}, "", true);
    expect(anonymous).not.toBeNull();
    expect(anonymous).not.toBe(tenant({ authorization: "Bearer " }));
    expect(anonymous).not.toBe(tenant({ authorization: "Bearer x" }, "", true));
  });
});
