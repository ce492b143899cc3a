import { issuesText, type TrajectoryFormat } from "../trajectory/formats";
import { anthropicNodeMessage } from "./message-view";
import { anthropicTrajectoryLine, keyAnthropicLine } from "./trajectory-line";

/** Anthropic Messages lines: written in the chat shape (`messages` holds Anthropic messages), keyed as `/v1/messages` keys. */
export const anthropicTrajectory: TrajectoryFormat = {
  api: "anthropic",
  keyLine(json, scope) {
    const line = anthropicTrajectoryLine.safeParse(json);
    if (!line.success) return { error: issuesText(line.error.issues) };
    return keyAnthropicLine(line.data, scope.tenant, scope.namespace);
  },
  nodeMessage: anthropicNodeMessage,
};
