/**
 * Trees for the scale rows (bench/scale.ts), seeded through `POST /api/import`
 * with chat lines of text answers, and the requests that replay them with the
 * answer each must get.
 */

/** A chat request of the load and what it must be answered with: the recorded text, or null when it must not be served. */
export interface Probe {
  body: { model: string; messages: Array<{ role: string; content: string }> };
  expected: string | null;
}

/** Import lines (JSONL) of one tree and the probes that read its recorded answers back. */
export interface Seed {
  lines: string[];
  probes: Probe[];
  /** Nodes the lines make (the root not counted). */
  nodes: number;
}

const SYSTEM = "You are the support desk of a travel agency. Answer briefly and quote booking references exactly.";

/**
 * `conversations` two-turn lines (system, user, assistant, user, assistant: 5
 * nodes, 2 recorded answers each), and `disputed` prompts recorded twice with
 * different answers (one path, two answers observed once each: the policy
 * serves neither, so a 200 for them is a wrong answer). `turns` 1 gives
 * one-turn lines (system, user, assistant: 3 nodes, one answer).
 */
export function seedTree(model: string, conversations: number, opts: { disputed?: number; turns?: 1 | 2; tag?: string } = {}): Seed {
  const tag = opts.tag ?? "scale";
  const turns = opts.turns ?? 2;
  const lines: string[] = [];
  const probes: Probe[] = [];
  let nodes = 1; // the system message, shared by every line
  for (let i = 0; i < conversations; i++) {
    const messages = [
      { role: "system", content: SYSTEM },
      { role: "user", content: `[${tag}] Where is booking ${i}?` },
      { role: "assistant", content: `Booking ${i} is confirmed for ${1 + (i % 28)} March, reference ${tag.toUpperCase()}-${(i * 7919) % 100_000}.` },
      { role: "user", content: `[${tag}] Can booking ${i} move one day later?` },
      { role: "assistant", content: `Booking ${i} now departs on ${2 + (i % 28)} March; the fare difference is ${(i % 90) + 10} EUR.` },
    ].slice(0, turns === 1 ? 3 : 5);
    lines.push(JSON.stringify({ model, messages }));
    nodes += messages.length - 1;
    for (let a = 2; a < messages.length; a += 2) probes.push({ body: { model, messages: messages.slice(0, a) }, expected: messages[a].content });
  }
  for (let d = 0; d < (opts.disputed ?? 0); d++) {
    const asked = [
      { role: "system", content: SYSTEM },
      { role: "user", content: `[${tag}] Is flight ${d} on time?` },
    ];
    for (const answer of ["Yes, on time.", "No, it is delayed by an hour."])
      lines.push(JSON.stringify({ model, messages: [...asked, { role: "assistant", content: answer }] }));
    nodes += 3;
    probes.push({ body: { model, messages: asked }, expected: null });
  }
  return { lines, probes, nodes };
}

/** The result of `POST /api/import`. */
export interface Imported {
  lines: number;
  trees: number;
  nodes_inserted: number;
  answers: number;
}

/** Imports `lines` into the caller's tenant under `namespace` (a tenant key imports into its own tenant). */
export async function importLines(url: string, authorization: string, namespace: string, lines: string[]): Promise<Imported> {
  const res = await fetch(`${url}/api/import`, {
    method: "POST",
    headers: { authorization, "content-type": "application/x-ndjson", "muscle-mem-namespace": namespace },
    body: lines.join("\n"),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`import into ${namespace}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Imported;
}

/** The id of the caller's one tree in `namespace`. */
export async function treeIdOf(url: string, authorization: string, namespace: string): Promise<string> {
  const res = await fetch(`${url}/api/trees?namespace=${encodeURIComponent(namespace)}`, { headers: { authorization } });
  const page = (await res.json()) as { data?: Array<{ id: string }> };
  if (res.status !== 200 || page.data?.length !== 1) throw new Error(`trees of ${namespace}: ${res.status} ${JSON.stringify(page).slice(0, 300)}`);
  return page.data[0].id;
}

/** What one replayed probe got back. */
export interface Answer {
  status: number;
  cache: string | null;
  node: string | null;
  content: string | null;
  /** The error envelope's message of a non-200 answer. */
  error?: string;
}

/** Sends a probe's request (`only-if-cached` by default: a miss is a 504, never a call to the model). */
export async function ask(url: string, authorization: string, namespace: string, body: unknown, onlyIfCached = true): Promise<Answer> {
  const headers: Record<string, string> = { authorization, "content-type": "application/json", "muscle-mem-namespace": namespace };
  if (onlyIfCached) headers["cache-control"] = "only-if-cached";
  const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  let content: string | null = null;
  if (res.status === 200) {
    const json = JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> };
    const c = json.choices?.[0]?.message?.content;
    content = typeof c === "string" ? c : null;
  }
  const error = res.status === 200 ? undefined : text.slice(0, 200);
  return { status: res.status, cache: res.headers.get("muscle-mem-cache"), node: res.headers.get("muscle-mem-node"), content, error };
}

/** Whether an answer is right for its probe: the recorded text as a hit, or (for a disputed path) no answer at all. */
export function judge(probe: Probe, a: Answer): "right" | "wrong" | "miss" | "error" {
  if (a.status === 504) return probe.expected === null ? "right" : "miss";
  if (a.status !== 200) return "error";
  return probe.expected !== null && a.content === probe.expected ? "right" : "wrong";
}
