// Types of stale-summary.js for the TypeScript tests that import it (the dashboard itself is plain JS with @ts-check).
export function summaryOf(out: { nodes: number; answers: number; templates: number; trees: number }, everyTree: boolean): string;
