import { describe, expect, it } from "vitest";
import { ask, reasonFor, wrongOrMiss } from "./templates.serve.support";

/**
 * The fourth template hunt (an IT/ops desk, tools/eval-workflows/ops.ts): each workflow is recorded on some
 * values and replayed on others; the scripted model decides, and a template must render exactly its answer
 * or miss. Every case here was served the wrong answer before its rule.
 */
const ALLOWED = ["downloads.example.com", "mirror.example.org", "cdn.example.net"];

/** An upgrade from a package URL (one token: domain, path, file and extension): allowed domains only, executables quarantined. */
const install = (url: string, ticket: string) =>
  ask(
    "Packages come only from downloads.example.com, mirror.example.org or cdn.example.net; executables are quarantined.",
    `${ticket}: install https://${url}`,
    !ALLOWED.includes(url.split("/")[0])
      ? `${ticket}: ${url} is not on the allow-list.`
      : url.endsWith(".exe")
        ? `${ticket}: quarantined ${url}.`
        : `${ticket}: scheduled ${url}.`,
  );

describe("the words inside an identifier (a domain, a path, an extension) are closed-class", () => {
  const train = [
    install("downloads.example.com/pkgs/agent-2.5.1.deb", "INC0010001"),
    install("mirror.example.org/pkgs/agent-2.5.1.rpm", "INC0010002"),
    install("cdn.example.net/pkgs/agent-2.5.1.msi", "INC0010003"),
  ];

  it("Should not install agent-2.5.1.exe from installs of .deb, .rpm and .msi (the letters varied: `exe` is as long as `deb`)", () => {
    const request = install("mirror.example.org/pkgs/agent-2.5.1.exe", "INC0010004");
    expect(wrongOrMiss(train, request)).toEqual({ served: null, model: "INC0010004: quarantined mirror.example.org/pkgs/agent-2.5.1.exe." });
    expect(reasonFor(train, request)).toContain("`exe`");
  });

  it("Should not install from mirror.badhost.org (a domain of the same shape and lengths as an allowed one)", () => {
    const request = install("mirror.badhost.org/pkgs/agent-2.5.1.deb", "INC0010004");
    expect(wrongOrMiss(train, request)).toEqual({ served: null, model: "INC0010004: mirror.badhost.org/pkgs/agent-2.5.1.deb is not on the allow-list." });
  });

  it("Should not install from cdn.example.org (each word confirmed at its place, never together)", () => {
    const request = install("cdn.example.org/pkgs/agent-2.5.1.rpm", "INC0010004");
    expect(wrongOrMiss(train, request).served).toBeNull();
  });

  it("Should serve the words of a confirmed value with new digits and short letters (data: the ticket, the version)", () => {
    const request = install("cdn.example.net/pkgs/agent-2.5.1.msi", "INC0010009");
    expect(wrongOrMiss(train, request).served).toBe("INC0010009: scheduled cdn.example.net/pkgs/agent-2.5.1.msi.");
  });
});

describe("runs of two letters or more inside an identifier are words too", () => {
  it("Should not queue INC0045678 from REQ0012345, CHG0023456 and TSK0034567 (the ticket's kind: incidents are paged)", () => {
    const handle = (id: string) => ask("Incidents are paged.", `Handle ${id}`, id.startsWith("INC") ? `Paged for ${id}.` : `Queued ${id}.`);
    const train = [handle("REQ0012345"), handle("CHG0023456"), handle("TSK0034567")];
    expect(wrongOrMiss(train, handle("INC0045678"))).toEqual({ served: null, model: "Paged for INC0045678." });
    expect(wrongOrMiss(train, handle("CHG0099999")).served).toBe("Queued CHG0099999.");
  });

  it("Should not deploy to web-05.cn.example.com from eu, us and ap hosts (a region of two letters, as long as the others)", () => {
    const deploy = (h: string) => ask("Hosts in cn need approval.", `Deploy to ${h}`, h.includes(".cn.") ? `${h} needs approval.` : `Deployed to ${h}.`);
    const train = [deploy("web-03.eu.example.com"), deploy("web-07.us.example.com"), deploy("web-01.ap.example.com")];
    expect(wrongOrMiss(train, deploy("web-05.cn.example.com"))).toEqual({ served: null, model: "web-05.cn.example.com needs approval." });
    expect(wrongOrMiss(train, deploy("web-09.us.example.com")).served).toBe("Deployed to web-09.us.example.com.");
  });

  it("Should not run job-40.sh from job-17.py, job-22.rb and job-31.js (an extension of two letters: scripts are reviewed)", () => {
    const run = (p: string) => ask(".sh scripts are reviewed.", `Run ${p}`, p.endsWith(".sh") ? `${p} needs review.` : `Ran ${p}.`);
    const train = [run("/opt/jobs/job-17.py"), run("/opt/jobs/job-22.rb"), run("/opt/jobs/job-31.js")];
    expect(wrongOrMiss(train, run("/opt/jobs/job-40.sh"))).toEqual({ served: null, model: "/opt/jobs/job-40.sh needs review." });
  });

  it("Should not open fe12:3456:789a::5 from unique-local fd.. addresses (the prefix decides: public needs review)", () => {
    const open = (ip: string) => ask("Public addresses need review.", `Open ${ip}`, /^f[cd]/.test(ip) ? `Opened ${ip}.` : `${ip} needs review.`);
    const train = [open("fd12:3456:789a::5"), open("fd34:1234:567b::7"), open("fd56:2345:678c::9")];
    expect(wrongOrMiss(train, open("fe12:3456:789a::5"))).toEqual({ served: null, model: "fe12:3456:789a::5 needs review." });
  });
});

describe("a MAC address's vendor prefix is closed-class", () => {
  const register = (m: string) =>
    ask("VMware NICs (00:50:56) are snapshot first.", `Register ${m}`, m.startsWith("00:50:56") ? `Snapshot ${m} first.` : `Registered ${m}.`);

  it("Should not register 00:50:56:ab:cd:ef (VMware) from three NICs of other vendors with the same shape", () => {
    const train = [register("00:11:22:ab:cd:ef"), register("00:21:33:ab:cd:ef"), register("00:44:55:ab:cd:ef")];
    expect(wrongOrMiss(train, register("00:50:56:ab:cd:ef"))).toEqual({ served: null, model: "Snapshot 00:50:56:ab:cd:ef first." });
    expect(reasonFor(train, register("00:50:56:ab:cd:ef"))).toContain("vendor prefix `00:50:56`");
    expect(wrongOrMiss(train, register("00:21:33:ab:cd:ef")).served).toBe("Registered 00:21:33:ab:cd:ef.");
  });

  it("Should serve a new NIC of a confirmed vendor, never VMware's (one letter pair each: ranged as a level, number by number)", () => {
    const train = [register("00:11:22:ab:12:cd"), register("00:21:33:ab:34:cd"), register("00:44:55:ab:56:cd")];
    expect(wrongOrMiss(train, register("00:21:33:ab:40:cd")).served).toBe("Registered 00:21:33:ab:40:cd.");
    expect(reasonFor(train, register("00:50:56:ab:40:cd"))).toContain("vendor prefix `00:50:56`");
  });
});

describe("a random UUID is data: its runs of hex letters and digits are no shape (reach)", () => {
  /** A job id copied from the request. */
  const job = (id: string) => ask("Report the job.", `Job ${id} finished?`, `Job ${id} finished at 03:00.`);
  const train = [job("4ab513de-eb24-46f8-a4f7-68cc3f215120"), job("9c0d21fa-17b2-4c3e-a9d1-0e5f6a7b8c9d"), job("e1f2a3b4-c5d6-47e8-b9a0-1b2c3d4e5f60")];

  it("Should serve a new version 4 UUID after three others (before, its shape 9a9a9a9-a9a9-… was never confirmed)", () => {
    expect(wrongOrMiss(train, job("70a1b2c3-d4e5-4f60-8a1b-2c3d4e5f6a7b")).served).toBe("Job 70a1b2c3-d4e5-4f60-8a1b-2c3d4e5f6a7b finished at 03:00.");
  });

  it("Should not serve the nil UUID, another version (a v1 UUID holds a time) or another case", () => {
    expect(wrongOrMiss(train, job("00000000-0000-0000-0000-000000000000")).served).toBeNull();
    expect(wrongOrMiss(train, job("70a1b2c3-d4e5-1f60-8a1b-2c3d4e5f6a7b")).served).toBeNull();
    expect(wrongOrMiss(train, job("70A1B2C3-D4E5-4F60-8A1B-2C3D4E5F6A7B")).served).toBeNull();
  });
});

describe("a port glued to a host is ranged", () => {
  const open = (hp: string) =>
    ask("Ports under 1024 need approval.", `Open ${hp}`, Number(hp.split(":")[1]) < 1024 ? `${hp} needs approval.` : `Opened ${hp}.`);
  const train = [open("svc.example.com:8443"), open("svc.example.com:9000"), open("svc.example.com:8080")];

  it("Should not open svc.example.com:1022 from 8443, 9000 and 8080 (an id of four digits was served outside those seen)", () => {
    expect(wrongOrMiss(train, open("svc.example.com:1022"))).toEqual({ served: null, model: "svc.example.com:1022 needs approval." });
    expect(reasonFor(train, open("svc.example.com:1022"))).toContain("port 1022 lies outside those confirmed");
    expect(wrongOrMiss(train, open("svc.example.com:8500")).served).toBe("Opened svc.example.com:8500.");
  });
});
