import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { between, firstUser, lastToolResult, pick, say, seeded, toolCall, type Workflow } from "./types";

/**
 * An IT/ops desk (the fourth template hunt): an agent upgrade on a host, with the kinds of values an ops
 * ticket holds. A ticket id (`INC0012345`), a severity (`P2`), a hostname (`web-03.eu.example.com`), a
 * package URL whose domain is on an allow-list and whose file's extension decides (`.exe` is quarantined),
 * a semantic version (`2.4.0` or later is upgraded, a pre-release `-rc.1` held), a byte size against a
 * quota (`512MB`, over 1GB refused), a port (under 1024 needs approval), a cron string (outside the night
 * hours refused), a window (`45m`, over an hour needs the change board); the host's tool result nests its
 * UUID, IPv4 and IPv6 addresses (private or public: a public host needs a security review) and MAC address
 * (a VMware one, `00:50:56`, is snapshot first) three deep; the scheduled job gives a UUID and a Unix
 * timestamp. The model copies them all in its last report, and decides on the severity, the addresses,
 * the domain, the extension, the version, the size, the port, the cron hour and the window.
 */
export interface OpsCase {
  ticket: string;
  severity: string;
  host: string;
  domain: string;
  /** The package file: `agent-2.5.1.deb`. */
  file: string;
  version: string;
  /** The package size in MB. */
  sizeMb: number;
  port: number;
  cron: string;
  /** The change window in minutes. */
  windowMin: number;
  hostId: string;
  ipv4: string;
  ipv6: string;
  mac: string;
  jobId: string;
  at: number;
}

export const ALLOWED = ["downloads.example.com", "mirror.example.org", "cdn.example.net"];
/** Domains of the same shape as allowed ones (runs of letters as long), never allowed. */
const DENIED = ["downloads.exarnple.com", "mirror.badhost.org", "cdn.attack.net"];
const QUOTA_MB = 1024;

const TOOLS = [
  { type: "function", function: { name: "get_host", parameters: { type: "object", properties: { hostname: { type: "string" } } } } },
  ...["page_oncall", "snapshot", "quarantine", "request_approval", "schedule_upgrade"].map((name) => ({
    type: "function",
    function: { name, parameters: { type: "object" } },
  })),
];

/** The window as written: minutes, or hours when whole. */
const windowText = (min: number) => (min % 60 === 0 ? `${min / 60}h` : `${min}m`);
/** A size as written: MB below a GB, GB with at most one decimal above. */
const sizeText = (mb: number) => (mb < 1024 ? `${mb}MB` : `${Number((mb / 1024).toFixed(1))}GB`);

const REQUEST =
  /^(\S+) \[(P\d)\]: upgrade the agent on (\S+) to (\S+) from https:\/\/([^/]+)\/pkgs\/(\S+) \((\S+)\), port (\d+); cron "([^"]+)", window (\S+)\.$/;

function request(body: ChatBody) {
  const [, ticket = "", severity = "", host = "", version = "", domain = "", file = "", size = "", port = "0", cron = "", window = ""] =
    REQUEST.exec(firstUser(body)) ?? [];
  const minutes = window.endsWith("h") ? Number(window.slice(0, -1)) * 60 : Number(window.slice(0, -1));
  const mb = size.endsWith("GB") ? Number(size.slice(0, -2)) * 1024 : Number(size.slice(0, -2));
  return { ticket, severity, host, version, domain, file, size, mb, port: Number(port), cron, window, minutes };
}

/** RFC 1918 IPv4 and unique-local (fc00::/7) IPv6 addresses are private. */
function isPrivate(ip: string): boolean {
  if (ip.includes(":")) return /^f[cd]/i.test(ip);
  const [a, b] = ip.split(".").map(Number);
  return a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31);
}

/** `2.4.0` or later, no pre-release. */
function versionOk(v: string): "ok" | "old" | "pre" {
  if (v.includes("-")) return "pre";
  const [major, minor] = v.split(".").map(Number);
  return major > 2 || (major === 2 && minor >= 4) ? "ok" : "old";
}

interface HostResult {
  host: { id: string; net: { ipv4: string; ipv6: string; mac: string } };
}

function script(body: ChatBody): ScriptedMessage {
  const r = request(body);
  const tool = lastToolResult(body);
  if (!tool) return toolCall("get_host", { hostname: r.host });
  const get = body.messages.find((m) => m.role === "tool" && String(m.content).includes('"net"'));
  const h = (JSON.parse(String(get?.content ?? "{}")) as HostResult).host;
  if (tool.name === "get_host") {
    const net = h.net;
    if (r.severity === "P1") return toolCall("page_oncall", { ticket: r.ticket, host: r.host });
    if (!isPrivate(net.ipv4) || !isPrivate(net.ipv6))
      return say(`${r.ticket} [${r.severity}]: ${r.host} is reachable at ${net.ipv4} and ${net.ipv6}; a public host needs a security review first.`);
    if (!ALLOWED.includes(r.domain)) return say(`${r.ticket}: ${r.domain} is not on the download allow-list.`);
    if (r.file.endsWith(".exe")) return toolCall("quarantine", { ticket: r.ticket, path: `/var/tmp/${r.file}` });
    const v = versionOk(r.version);
    if (v === "pre") return say(`${r.ticket}: ${r.version} is a pre-release; held until it ships.`);
    if (v === "old") return say(`${r.ticket}: ${r.version} is older than the supported 2.4.0; nothing to do.`);
    if (r.mb > QUOTA_MB) return say(`${r.ticket}: the package is ${r.size}, over the 1GB quota of ${r.host}.`);
    if (net.mac.toLowerCase().startsWith("00:50:56")) return toolCall("snapshot", { host_id: h.id, mac: net.mac });
    if (r.port < 1024) return toolCall("request_approval", { ticket: r.ticket, port: r.port });
    const hour = Number(r.cron.split(" ")[1]);
    if (hour > 5) return say(`${r.ticket}: cron "${r.cron}" runs outside the night hours (00:00-05:59); please reschedule.`);
    if (r.minutes > 60) return say(`${r.ticket}: a ${r.window} window needs the change board; submitted for its next meeting.`);
    return toolCall("schedule_upgrade", {
      host_id: h.id,
      url: `https://${r.domain}/pkgs/${r.file}`,
      port: r.port,
      cron: r.cron,
      window: r.window,
    });
  }
  const o = tool.result;
  if (tool.name === "schedule_upgrade") {
    const job = o.job as { id: string; at: number };
    return say(
      `${r.ticket} [${r.severity}] done: agent ${r.version} (${r.size}) on ${r.host} (${h.net.ipv4}, ${h.net.ipv6}, ${h.net.mac}) is job ${job.id}, first run at ${job.at} (cron "${r.cron}", window ${r.window}, port ${r.port}).`,
    );
  }
  if (tool.name === "snapshot")
    return say(`${r.ticket}: ${r.host} is a virtual machine (${h.net.mac}); snapshot ${String(o.snapshot)} taken first, upgrade next window.`);
  if (tool.name === "quarantine") return say(`${r.ticket}: ${String(o.path)} quarantined; executables are never installed.`);
  if (tool.name === "request_approval") return say(`${r.ticket}: port ${r.port} is privileged; approval ${String(o.approval)} requested.`);
  return say(`${r.ticket}: paged the on-call engineer (${String(o.page)}).`);
}

const hex = (rng: () => number, n: number) => Array.from({ length: n }, () => "0123456789abcdef"[between(rng, 0, 15)]).join("");
const uuid = (rng: () => number) => `${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-a${hex(rng, 3)}-${hex(rng, 12)}`;
const mac = (rng: () => number, vm: boolean) =>
  [...(vm ? ["00", "50", "56"] : [pick(rng, ["3c", "a4", "f8"]), hex(rng, 2), hex(rng, 2)]), hex(rng, 2), hex(rng, 2), hex(rng, 2)].join(":");

/** A host of the fleet: the desk sees the same hosts again and again, each with its own addresses. */
interface Host {
  name: string;
  id: string;
  ipv4: string;
  ipv6: string;
  mac: string;
}

/** The fleet (drawn once, from its own seed: every run of the evaluation sees the same hosts). */
const FLEET: Host[] = (() => {
  const rng = seeded(2026);
  return ["web-03.eu", "web-07.eu", "db-01.us", "api-12.us", "cache-02.ap", "api-04.ap"].map((h) => ({
    name: `${h}.example.com`,
    id: uuid(rng),
    ipv4: pick(rng, [`10.${between(rng, 0, 255)}`, "192.168", `172.${between(rng, 16, 31)}`]) + `.${between(rng, 0, 255)}.${between(rng, 1, 254)}`,
    ipv6: `fd${hex(rng, 2)}:${hex(rng, 4)}:${hex(rng, 4)}::${between(rng, 2, 9)}`,
    mac: mac(rng, false),
  }));
})();

/** A release being rolled out: its version, package size and change window (one per rollout, many tickets each). */
const RELEASES: Array<{ version: string; sizeMb: number; windowMin: number }> = [
  { version: "2.4.3", sizeMb: 384, windowMin: 30 },
  { version: "2.5.1", sizeMb: 512, windowMin: 45 },
  { version: "2.6.0", sizeMb: 640, windowMin: 60 },
];

/** An IT/ops desk (`wf-ops`). */
export const opsDesk: Workflow<OpsCase> = {
  name: "ops-desk",
  system:
    "You are the ops desk. Look the host up. Page on-call for P1. Public hosts need a security review; packages come only from the allow-list; executables are quarantined; versions before 2.4.0 and pre-releases are not installed; packages over 1GB are refused; VMware hosts are snapshot first; ports under 1024 need approval; crons run between 00:00 and 05:59; windows over 1h go to the change board.",
  tools: TOOLS,
  kinds: [
    ["deb", 2],
    ["rpm", 1],
    ["msi", 1],
  ],
  traps: ["p1", "public-ipv4", "public-ipv6", "bad-domain", "exe", "prerelease", "old-version", "big", "vm", "low-port", "day-cron", "long-window"],
  makeCase(rng, kind) {
    const release = pick(rng, RELEASES);
    const host = { ...pick(rng, FLEET) };
    // Traps on a known host: an address renumbered public, a VMware MAC after a migration.
    if (kind === "public-ipv4") host.ipv4 = `${pick(rng, [34, 52, 172])}.${between(rng, 32, 99)}.${between(rng, 0, 255)}.${between(rng, 1, 254)}`;
    if (kind === "public-ipv6") host.ipv6 = `2a01:4f8:${hex(rng, 4)}:${hex(rng, 3)}::${between(rng, 2, 9)}`;
    if (kind === "vm") host.mac = mac(rng, true);
    const version =
      kind === "old-version"
        ? `2.${between(rng, 0, 3)}.${between(rng, 0, 12)}`
        : kind === "prerelease"
          ? `${release.version}-rc.${between(rng, 1, 3)}`
          : release.version;
    const ext = kind === "exe" ? "exe" : kind === "rpm" || kind === "msi" ? kind : "deb";
    return {
      ticket: `INC00${between(rng, 10000, 99999)}`,
      severity: kind === "p1" ? "P1" : `P${between(rng, 2, 4)}`,
      host: host.name,
      domain: kind === "bad-domain" ? pick(rng, DENIED) : pick(rng, ALLOWED),
      file: `agent-${version}.${ext}`,
      version,
      sizeMb: kind === "big" ? pick(rng, [1536, 2048, 3072]) : release.sizeMb,
      port: kind === "low-port" ? pick(rng, [22, 80, 443, 873]) : between(rng, 8000, 9999),
      cron: `${pick(rng, [0, 15, 30, 45])} ${kind === "day-cron" ? between(rng, 9, 17) : between(rng, 1, 5)} * * *`,
      windowMin: kind === "long-window" ? pick(rng, [90, 120, 180]) : release.windowMin,
      hostId: host.id,
      ipv4: host.ipv4,
      ipv6: host.ipv6,
      mac: host.mac,
      jobId: uuid(rng),
      at: 1767225600 + between(rng, 0, 30) * 86400 + between(rng, 0, 5) * 3600,
    };
  },
  userMessage: (c) =>
    `${c.ticket} [${c.severity}]: upgrade the agent on ${c.host} to ${c.version} from https://${c.domain}/pkgs/${c.file} (${sizeText(c.sizeMb)}), port ${c.port}; cron "${c.cron}", window ${windowText(c.windowMin)}.`,
  execTool(c, call) {
    if (call.name === "get_host") return { host: { id: c.hostId, name: c.host, net: { ipv4: c.ipv4, ipv6: c.ipv6, mac: c.mac } } };
    if (call.name === "schedule_upgrade") return { job: { id: c.jobId, at: c.at } };
    if (call.name === "snapshot") return { snapshot: `SNAP-${c.ticket.slice(3)}` };
    if (call.name === "quarantine") return { path: call.args.path };
    if (call.name === "request_approval") return { approval: `CHG${c.ticket.slice(3)}` };
    return { page: `PG-${c.ticket.slice(5)}` };
  },
  script,
  rangeOf: (c) => {
    const v = versionOk(c.version);
    const cls = [
      c.severity === "P1",
      isPrivate(c.ipv4) && isPrivate(c.ipv6),
      ALLOWED.includes(c.domain),
      c.file.split(".").pop(),
      v,
      c.sizeMb > QUOTA_MB,
      c.mac.startsWith("00:50:56"),
      c.port < 1024,
      Number(c.cron.split(" ")[1]) > 5,
      c.windowMin > 60,
    ].join("|");
    return { cls, ranged: [c.sizeMb, c.port, Number(c.cron.split(" ")[1]), c.windowMin, c.at] };
  },
  bindingsOf: (c) => ({ ticket: c.ticket, host: c.host, host_id: c.hostId, job_id: c.jobId }),
};
