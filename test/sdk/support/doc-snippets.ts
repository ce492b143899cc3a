/**
 * The TypeScript snippets of a Markdown page, and what each says it prints: a line
 * `console.log(…); // false: why` prints `false`. Only printed booleans and numbers are claimed this way.
 */
export interface Snippet {
  /** 1-based line of the opening fence in the page. */
  line: number;
  code: string;
  /** The values the snippet's annotated console.log lines print, in order, as printed. */
  prints: string[];
}

const CLAIM = /console\.log\(.*\);\s*\/\/\s*(true|false|-?\d+(?:\.\d+)?)\b/;
/** A line of output that is a claimed kind of value: every such line must be claimed by the snippet. */
export const PRINTED_VALUE = /^(true|false|-?\d+(?:\.\d+)?)$/;

export function tsSnippets(markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```ts") continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trim() !== "```"; i++) body.push(lines[i]);
    if (i === lines.length) throw new Error(`the ts snippet at line ${start + 1} has no closing fence`);
    const prints = body.map((l) => CLAIM.exec(l)?.[1]).filter((v): v is string => v !== undefined);
    snippets.push({ line: start + 1, code: `${body.join("\n")}\n`, prints });
  }
  return snippets;
}
