import type { Body } from "./bodies";
import { HEADERS, post } from "./http";
import { addStoreCounts, noStoreCounts, type StoreCounts } from "./load";

/** Store counts per kind of hit: served from isolate memory (warm), from the per-colo layer (colo), from D1 (cold). */
export interface HitClasses {
  warm: StoreCounts;
  colo: StoreCounts;
  cold: StoreCounts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * After both TTLs lapsed, sends each of `bodies` (all recorded) twice in a
 * row (cold, then from isolate memory); then, after the memory TTL but inside
 * the colo TTL, each once more (colo). Each response is filed by what its
 * `server-timing` says (no `colo` entry: memory; `colo;desc=hit`; `colo;desc=miss`),
 * not by the pass it was sent in.
 */
export async function hitClasses(url: string, bodies: Body[], ttl: { hotMs: number; coloMs: number }): Promise<HitClasses> {
  const out: HitClasses = { warm: noStoreCounts(), colo: noStoreCounts(), cold: noStoreCounts() };
  const send = async (body: Body) => {
    const res = await post(url, body, HEADERS);
    await res.arrayBuffer();
    if (res.headers.get("muscle-mem-cache") !== "hit") throw new Error(`hit classes: a recorded body was a ${res.headers.get("muscle-mem-cache")}`);
    const timing = res.headers.get("server-timing");
    const colo = /colo;dur=[\d.]+;desc="?(hit|miss)/.exec(timing ?? "")?.[1];
    addStoreCounts(colo === "hit" ? out.colo : colo === "miss" ? out.cold : out.warm, timing);
  };
  await sleep(ttl.coloMs + ttl.hotMs + 500);
  for (const body of bodies) {
    await send(body);
    await send(body);
  }
  await sleep(ttl.hotMs + 300);
  for (const body of bodies) await send(body);
  return out;
}

/** Per-request means of a class (null in JSON when no response fell in it). */
export function perRequest(c: StoreCounts): {
  responses: number;
  d1Queries: number;
  doCalls: number;
  coloReads: number;
  rowsRead: number;
  rowsWritten: number;
} {
  const n = c.responses;
  return {
    responses: n,
    d1Queries: c.d1Queries / n,
    doCalls: c.doCalls / n,
    coloReads: (c.colo.hit + c.colo.miss) / n,
    rowsRead: (c.rowsRead ?? 0) / n,
    rowsWritten: (c.rowsWritten ?? 0) / n,
  };
}
