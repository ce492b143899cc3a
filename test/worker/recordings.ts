import { canonicalJson } from "../../src/core/canonical";
import { childHash, walk } from "../../src/core/hash";
import type { RecordInput } from "../../src/store/tree/record";

/** A recording of `texts` (alternating user/assistant) followed by `answer`. */
export function recording(treeId: string, texts: string[], answer: string): RecordInput {
  const path = walk(
    treeId,
    texts.map((t, i) => ({ role: i % 2 ? "assistant" : "user", content: t })),
  );
  const parent = path.at(-1)!.hash;
  const json = canonicalJson({ role: "assistant", content: answer });
  return {
    treeId,
    tenant: "t",
    namespace: "default",
    model: "m",
    frameJson: '{"model":"m"}',
    path: path.map((s) => ({ hash: s.hash, parent: s.parent, role: s.message.role, json: s.json })),
    answer: { hash: childHash(parent, json), parent, role: "assistant", json, finishReason: "stop", promptTokens: 3, completionTokens: 2, latencyMs: 50 },
  };
}
