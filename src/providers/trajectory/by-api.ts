import { anthropicTrajectoryLine, keyAnthropicLine } from "../anthropic/trajectory-line";
import { geminiTrajectory } from "../gemini/trajectory-line";
import { responsesTrajectory } from "../responses/trajectory-line";
import { issuesText, type TrajectoryFormat } from "./formats";

/** Anthropic Messages lines: written in the chat shape (`messages` holds Anthropic messages), keyed as `/v1/messages` keys. */
const anthropicTrajectory: TrajectoryFormat = {
  api: "anthropic",
  keyLine(json, scope) {
    const line = anthropicTrajectoryLine.safeParse(json);
    if (!line.success) return { error: issuesText(line.error.issues) };
    return keyAnthropicLine(line.data, scope.tenant, scope.namespace);
  },
};

/** Every API whose trees are exported in their own shape; a line naming none of them is a chat line. */
const FORMATS: readonly TrajectoryFormat[] = [anthropicTrajectory, responsesTrajectory, geminiTrajectory];

/** The format of an API (`params["muscle-mem:api"]` of a line, `"muscle-mem:api"` of a frame), or undefined (chat). */
export function trajectoryFormatOf(api: unknown): TrajectoryFormat | undefined {
  return typeof api === "string" ? FORMATS.find((f) => f.api === api) : undefined;
}
