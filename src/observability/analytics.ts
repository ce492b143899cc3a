import type { RequestLogLine } from "./log";

/**
 * Writes one data point per request to Workers Analytics Engine, when the
 * optional `ANALYTICS` binding exists (a no-op otherwise). Column meaning, for
 * the SQL API (docs/deploy.md "Observability"):
 *
 * | column | value |
 * | --- | --- |
 * | index1 | tree id (the sampling key), or the route when there is none |
 * | blob1 | outcome: hit, miss, bypass, or `none` |
 * | blob2 | route pattern |
 * | blob3 | tree id, or empty |
 * | blob4 | bypass reason, or empty |
 * | double1 | total ms (to our response headers) |
 * | double2 | lookup ms |
 * | double3 | upstream ms |
 * | double4 | HTTP status |
 */
export function writeRequestPoint(dataset: AnalyticsEngineDataset | undefined, line: RequestLogLine): void {
  if (!dataset) return;
  try {
    dataset.writeDataPoint({
      indexes: [(line.tree ?? line.route).slice(0, 96)],
      blobs: [line.outcome ?? "none", line.route, line.tree ?? "", line.reason ?? ""],
      doubles: [line.ms.total, line.ms.lookup ?? 0, line.ms.upstream ?? 0, line.status],
    });
  } catch {
    // Analytics must never break a request.
  }
}
