import type { ToolCallIds } from "../core/canonical";
import type { PathStep } from "../core/hash";
import type { CanonicalMessage } from "../core/messages";
import type { Spelling } from "../core/number-text";
import type { Bindings } from "./templates/bindings";

/** Where a request sits in the trees: its tree, its path and h_n, the node whose answer it asks for. */
export interface RequestKey {
  tenant: string;
  namespace: string;
  treeId: string;
  frameJson: string;
  model: string;
  path: PathStep[];
  /** h_n: the parent of the answer. */
  key: string;
  ids: ToolCallIds;
  /** Per message index, the numbers its hash read written otherwise than JSON.stringify would (src/core/number-text.ts); the declared key reads them too. */
  numbers?: ReadonlyMap<number, readonly Spelling[]>;
  /** Set when the request is keyed with declared variables (placeholders): its answers are stored abstracted. */
  declared?: DeclaredKeying;
}

/** A request keyed with placeholders, and how to store and render its answers (templates/declared.ts). */
export interface DeclaredKeying {
  treeId: string;
  frameJson: string;
  messages: CanonicalMessage[];
  bindings: Bindings;
}
