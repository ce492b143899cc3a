// Types of format.js for the TypeScript tests that import it (the dashboard itself is plain JS with @ts-check).
export function shown(text: string): string;
