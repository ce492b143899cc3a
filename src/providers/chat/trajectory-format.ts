import { issuesText, type TrajectoryFormat } from "../trajectory/formats";
import { keyLine, trajectoryLine } from "../trajectory/line";
import { chatNodeMessage } from "./message-view";

/** Chat Completions lines: the default shape of shared/workloads/*.jsonl (`messages`), keyed as `/v1/chat/completions` keys. */
export const chatTrajectory: TrajectoryFormat = {
  api: null,
  keyLine(json, scope) {
    const line = trajectoryLine.safeParse(json);
    if (!line.success) return { error: issuesText(line.error.issues) };
    return keyLine(line.data, scope.tenant, scope.namespace);
  },
  nodeMessage: chatNodeMessage,
};
