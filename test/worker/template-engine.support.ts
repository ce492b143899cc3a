import { ToolCallIds } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import type { RequestKey } from "../../src/cache/request-key";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";

/** What the engine-level template tests drive directly: trajectories, request keys and templates learned from them. */
const meta = { finishReason: "stop", promptTokens: 10, completionTokens: 2, latencyMs: 50 };

/** A recorded conversation under `root` and the model's text answer to it. */
export function trajectoryOf(root: string, messages: CanonicalMessage[], answer: string): Trajectory {
  return { root, hashes: walk(root, messages).map((s) => s.hash), messages, answer: { role: "assistant", content: answer }, meta };
}

/** The request key of `messages` under `root` (tenant `t`, no frame). */
export function keyOfMessages(root: string, messages: CanonicalMessage[]): RequestKey {
  const path = walk(root, messages);
  return { tenant: "t", namespace: "default", treeId: root, frameJson: "{}", model: "m", path, key: path[path.length - 1].hash, ids: new ToolCallIds() };
}

/** The template the first two trajectories induce, weighed against the rest. */
export function learnAll(ts: readonly Trajectory[]): LearnedTemplate {
  const t = induce(ts[0], ts[1]);
  if (!t) throw new Error("no template");
  for (const other of ts.slice(2)) t.state = weigh(t, other).state;
  return t;
}
