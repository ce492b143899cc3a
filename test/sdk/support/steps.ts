import type { Step, Trajectory } from "../../../sdk/src/index.js";

/** The steps of a trajectory that has no parallel step; throws when one is parallel, so a test asserting single calls fails. */
export function singleSteps(trajectory: Trajectory): Step[] {
  return trajectory.steps.map((step, i) => {
    if ("parallel" in step) throw new Error(`step ${i} of ${trajectory.id} is a parallel step: ${JSON.stringify(step)}`);
    return step;
  });
}
