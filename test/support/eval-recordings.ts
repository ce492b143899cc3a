import { keyAnswer, keyRequest } from "../../src/providers/chat/key";
import { chatRequest, type ChatMessage } from "../../src/core/messages";
import type { RecordInput } from "../../src/core/recording";
import { simulatedWorker } from "../../tools/eval-workflows/simulate";
import { experiment, WORKFLOWS, type Chat } from "../../tools/eval-workflows/run";
import type { ChatBody } from "../../tools/scripted-model";

/** A recorded miss as the learner gets it: the request's path and the model's answer (null: not keyed). */
export function recordOf(raw: unknown, headers: Record<string, string>, message: ChatMessage, finishReason: string): RecordInput | null {
  const keyed = keyRequest(chatRequest.parse(raw), headers.authorization ?? "", headers["muscle-mem-namespace"] ?? "");
  if (!keyed.ok) return null;
  const key = keyed.key;
  const answer = keyAnswer(key, message);
  if (!answer) return null;
  return {
    treeId: key.treeId,
    tenant: key.tenant,
    namespace: key.namespace,
    model: key.model,
    frameJson: key.frameJson,
    path: key.path.map((s) => ({ hash: s.hash, parent: s.parent, role: s.role, json: s.json })),
    answer: { hash: answer.hash, parent: key.key, role: "assistant", json: answer.json, finishReason, promptTokens: 10, completionTokens: 5, latencyMs: 50 },
  };
}

/**
 * Every miss the evaluation's workflows record (tools/eval-workflows, learned mode, through the simulated
 * Worker: what the Worker would hand its learner), in order. `only`: workflow prefixes; `tag` makes the
 * trees new.
 */
export async function evalRecordings(opts: { only?: string[]; warm?: number; fresh?: number; traps?: number; tag?: string } = {}): Promise<RecordInput[]> {
  const out: RecordInput[] = [];
  for (const [prefix, wf] of Object.entries(WORKFLOWS).filter(([p]) => !opts.only || opts.only.includes(p))) {
    const sim = simulatedWorker((body: ChatBody) => wf.script(body));
    const chat: Chat = async (raw, headers) => {
      const res = await sim.chat(raw, headers);
      if (res.headers.get("muscle-mem-cache") !== "miss") return res;
      const choice = ((await res.clone().json()) as { choices: Array<{ message: ChatMessage; finish_reason: string }> }).choices[0];
      const r = recordOf(raw, headers, choice.message, choice.finish_reason);
      if (r) out.push(r);
      return res;
    };
    const o = {
      warm: opts.warm ?? 8,
      fresh: opts.fresh ?? 80,
      trapsPerKind: opts.traps ?? 5,
      seed: 42,
      mode: "learned" as const,
      tag: `${opts.tag ?? "lc"}${prefix}`,
    };
    await experiment(wf, prefix, chat, o);
  }
  return out;
}
