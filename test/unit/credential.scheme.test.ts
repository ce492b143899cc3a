import { describe, expect, it } from "vitest";
import { credentialOf, tenantOfRequest, withoutCredentials } from "../../src/core/credential";
import { tenantOf } from "../../src/core/hash";
import { CREDENTIALS } from "../../src/providers";

const url = (search = "") => new URL(`http://mm.test/v1/chat/completions${search}`);
const tenant = (headers: Record<string, string>, search = "") => tenantOfRequest(new Headers(headers), url(search), false, CREDENTIALS);

describe("an authorization value's scheme and spacing (RFC 9110: the scheme is case-insensitive)", () => {
  it("Should read bearer, BEARER and Bearer with any run of spaces or tabs before the token as Bearer <token>", () => {
    const pinned = tenant({ authorization: "Bearer sk-x" });
    for (const sent of ["bearer sk-x", "BEARER sk-x", "Bearer  sk-x", "bEaReR \t sk-x", "Bearer\tsk-x"]) {
      expect(tenant({ authorization: sent }), sent).toBe(pinned);
    }
    expect(tenant({ "proxy-authorization": "bearer  sk-x" })).toBe(pinned);
    expect(tenant({ "cf-aig-authorization": "bearer gw-1" })).toBe(tenant({ "cf-aig-authorization": "Bearer gw-1" }));
    // The same key as a bare key and as a lower-case bearer is one credential, counted once.
    expect(tenant({ authorization: "bearer sk-x", "x-api-key": "sk-x" })).toBe(pinned);
  });

  it("Should keep the token exactly as sent: another token, its case or its inner spacing is another tenant", () => {
    const pinned = tenant({ authorization: "Bearer sk-x" });
    for (const other of ["bearer SK-X", "Bearer sk-x2", "Bearer sk- x", "bearer sk-x y", "Bearersk-x", "Bearer: sk-x"]) {
      expect(tenant({ authorization: other }), other).not.toBe(pinned);
    }
    expect(tenant({ authorization: "bearer sk-x  y" })).not.toBe(tenant({ authorization: "Bearer sk-x y" }));
    // Only HTTP whitespace (space, tab) is spacing: a no-break space after the token is part of it.
    expect(tenant({ authorization: "Bearer sk-x\u00a0" })).not.toBe(pinned);
  });

  it("Should keep other schemes as sent but for the spacing after them, so their tenants do not move", () => {
    expect(tenant({ authorization: "Basic dXNlcjpwYXNz" })).toBe(tenantOf("Basic dXNlcjpwYXNz"));
    expect(tenant({ authorization: "Basic   dXNlcjpwYXNz" })).toBe(tenantOf("Basic dXNlcjpwYXNz"));
    expect(tenant({ authorization: "token gh-1" })).toBe(tenantOf("token gh-1"));
    // A value with no scheme is one token, as sent.
    expect(credentialOf(new Headers({ authorization: "sk-bare" }), url(), CREDENTIALS)).toBe("sk-bare");
  });

  it("Should still find no credential in a scheme with no token, whatever its case", () => {
    for (const sent of ["bearer", "BEARER ", "Bearer \t"]) expect(tenant({ authorization: sent }), sent).toBeNull();
  });

  it("Should scrub a lower-case or widely spaced bearer token from a quoted message", () => {
    const headers = new Headers({ authorization: "bearer   sk-scrub-me" });
    expect(withoutCredentials("bad key sk-scrub-me", headers, undefined, CREDENTIALS)).toBe("bad key [credential]");
  });
});

describe("a cookie the upstream may read (Cloudflare Access's CF_Authorization)", () => {
  it("Should give two cookies behind one placeholder Authorization two tenants, neither the placeholder's", () => {
    const placeholder = { authorization: "Bearer sk-placeholder" };
    const one = tenant({ ...placeholder, cookie: "CF_Authorization=jwt-one" });
    const two = tenant({ ...placeholder, cookie: "CF_Authorization=jwt-two" });
    expect(one).not.toBe(two);
    expect(one).not.toBe(tenant(placeholder));
    // A cookie alone is a credential: a request with only a cookie is never anonymous traffic.
    expect(tenant({ cookie: "CF_Authorization=jwt-one" })).not.toBeNull();
  });

  it("Should not let Cloudflare's own edge cookies (bot management, rate limiting: they rotate) split a tenant", () => {
    const placeholder = { authorization: "Bearer sk-placeholder" };
    expect(tenant({ ...placeholder, cookie: "__cf_bm=rotates-1; _cfuvid=u1; cf_clearance=c1" })).toBe(tenant(placeholder));
    expect(tenant({ ...placeholder, cookie: "__cf_bm=rotates-1; CF_Authorization=jwt-one" })).toBe(
      tenant({ ...placeholder, cookie: "CF_Authorization=jwt-one; __cf_bm=rotates-2" }),
    );
    expect(tenant({ cookie: "__cf_bm=rotates-1" })).toBeNull();
    // Two sessions of one name in another order: the upstream may read the first, so they stay apart.
    expect(tenant({ cookie: "sid=a; sid=b" })).not.toBe(tenant({ cookie: "sid=b; sid=a" }));
  });

  it("Should scrub the whole cookie and each of its values from a quoted message", () => {
    const headers = new Headers({ cookie: "theme=dark; CF_Authorization=eyJ.session-one" });
    expect(withoutCredentials("session eyJ.session-one expired", headers, undefined, CREDENTIALS)).toBe("session [credential] expired");
    expect(withoutCredentials("sent theme=dark; CF_Authorization=eyJ.session-one", headers, undefined, CREDENTIALS)).toBe("sent [credential]");
  });
});

describe("an API gateway's consumer key", () => {
  it("Should give two Gravitee consumers (X-Gravitee-Api-Key, or ?api-key=) behind one placeholder Authorization two tenants", () => {
    const placeholder = { authorization: "Bearer sk-placeholder" };
    expect(tenant({ ...placeholder, "x-gravitee-api-key": "g1" })).not.toBe(tenant({ ...placeholder, "x-gravitee-api-key": "g2" }));
    expect(tenant({ ...placeholder, "x-gravitee-api-key": "g1" })).not.toBe(tenant(placeholder));
    expect(tenant(placeholder, "?api-key=g1")).not.toBe(tenant(placeholder, "?api-key=g2"));
    expect(tenant(placeholder, "?apikey=k1")).not.toBe(tenant(placeholder));
  });
});
