import { providerOfApiOrChat } from "../../providers";
import type { OpenAIMessage } from "../../providers/chat/message-view";
import type { AnthropicStoredMessage } from "../../providers/anthropic/message-view";
import type { NodeView } from "../../providers/node-view";
import type { TrajectoryFormat } from "../../providers/trajectory/formats";

export type { AnthropicStoredMessage, OpenAIMessage };

/** A node of a tree of another API in that API's own shape: Responses `{role, items}`, Gemini `{role, parts}` (its TrajectoryFormat's `nodeMessage`). */
export type ProviderMessage = Record<string, unknown>;

/** A stored message in its API's format: OpenAI chat, Anthropic Messages for `/v1/messages` trees, or another API's own shape. */
export type TrajectoryMessage = OpenAIMessage | AnthropicStoredMessage | ProviderMessage;

/** The format of the trees whose frames name `api` (null: chat); a tree of an API no provider has reads as chat. */
export function formatOfApi(api: unknown): TrajectoryFormat {
  return providerOfApiOrChat(api).format;
}

/**
 * A stored node (its message column) as the node API shows it, by the tree's API (`muscle-mem:api` of its
 * frame; null for chat): each provider's `nodeMessage` (src/providers/<api>/): a chat or Anthropic message,
 * a Responses node as its `input` items, a Gemini node as its content.
 */
export function nodeMessageOf(json: string, api: string | null): TrajectoryMessage {
  return formatOfApi(api).nodeMessage(json);
}

/** A stored node as its tree's provider views it (`nodeView` of its registry entry): texts, calls, results, refusals. */
export function nodeViewOf(json: string, api: string | null): NodeView {
  return providerOfApiOrChat(api).nodeView(json);
}

/** A path's stored nodes, root first, as the list a client of the tree's API sends: what the export writes (Responses `input`, Gemini `contents`, chat or Anthropic `messages`). */
export function pathMessagesOf(jsons: readonly string[], api: string | null): TrajectoryMessage[] {
  const format = formatOfApi(api);
  return format.pathMessages ? format.pathMessages(jsons) : jsons.map((json) => format.nodeMessage(json));
}
