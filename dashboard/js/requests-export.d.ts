// Types of requests-export.js for the TypeScript tests that import it (the dashboard itself is plain JS with @ts-check).
export function cell(v: unknown): string;
export function toCsv(rows: readonly Record<string, unknown>[]): string;
export function downloadRows(rows: readonly Record<string, unknown>[], format: "csv" | "json"): void;
