// @ts-check
/** The request log as a file: CSV (one line per row) or JSON (the rows as the API gives them). */

/** @typedef {import("./requests.js").Recent} Recent */

const COLUMNS = /** @type {const} */ ([
  "at",
  "request_id",
  "outcome",
  "status",
  "route",
  "model",
  "namespace",
  "tree_id",
  "latency_ms",
  "count",
  "prompt_tokens",
  "completion_tokens",
  "node",
  "template_id",
  "reason",
  "why",
  "field",
]);

/**
 * One CSV cell. Recorded text (a model name, a miss's field, an error's reason) is a client's: a cell that
 * starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to a spreadsheet (CSV injection),
 * so it is prefixed with `'` and read as text. Numbers are written as they are (a negative one stays a number).
 * @param {unknown} v
 */
export function cell(v) {
  let text = v === null || v === undefined ? "" : String(v);
  if (typeof v !== "number" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The rows as CSV text, a header line first. @param {Recent[]} rows */
export function toCsv(rows) {
  const lines = rows.map((r) => {
    /** @type {Record<string, unknown>} */
    const flat = {
      ...r,
      at: new Date(r.at).toISOString(),
      why: r.explanation?.kind ?? "",
      field: r.explanation?.divergence?.field ?? r.explanation?.frame?.field ?? "",
    };
    return COLUMNS.map((c) => cell(flat[c])).join(",");
  });
  return [COLUMNS.join(","), ...lines].join("\n") + "\n";
}

/** Downloads `rows` as requests.csv or requests.json. @param {Recent[]} rows @param {"csv" | "json"} format */
export function downloadRows(rows, format) {
  const text = format === "csv" ? toCsv(rows) : JSON.stringify(rows, null, 2);
  const blob = new Blob([text], { type: format === "csv" ? "text/csv" : "application/json" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `requests.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
