import { parseArgs } from "node:util";
import { EVAL_APIS, type EvalApiName } from "./apis/index";

/** `npm run eval:templates`' options, read from the command line (scripts/eval-templates.ts). */
export interface EvalOptions {
  warm: number;
  fresh: number;
  trapsPerKind: number;
  seed: number;
  /** Workflow model-name prefixes (`--only wf-rmail,wf-book`), or null for all. */
  only: string[] | null;
  sim: boolean;
  api: EvalApiName;
}

export const EVAL_USAGE =
  "usage: npm run eval:templates -- [--warm N] [--fresh N] [--traps N] [--seed N] [--only PREFIXES] [--sim] [--api chat|anthropic|responses|gemini]";

const isEvalApi = (value: string): value is EvalApiName => (EVAL_APIS as readonly string[]).includes(value);

/**
 * Reads the options, or says in one line what is wrong with them (an unknown option or API, a count that is no
 * whole number, `--sim` with another API): the script prints that line and the usage, with no stack trace.
 */
export function parseEvalOptions(args: readonly string[]): EvalOptions | { error: string } {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...args],
      options: {
        warm: { type: "string", default: "8" },
        fresh: { type: "string", default: "80" },
        traps: { type: "string", default: "5" },
        seed: { type: "string", default: "42" },
        only: { type: "string", default: "" },
        sim: { type: "boolean", default: false },
        api: { type: "string", default: "chat" },
      },
    }).values;
  } catch (error) {
    return { error: (error instanceof Error ? error.message : String(error)).split("\n")[0] };
  }
  const api = String(values.api);
  if (!isEvalApi(api)) return { error: `--api ${api}: not one of ${EVAL_APIS.join(", ")}` };
  if (values.sim === true && api !== "chat") return { error: `--sim simulates Chat Completions only: run --api ${api} without --sim (under wrangler dev)` };
  const counts: Record<string, number> = {};
  for (const name of ["warm", "fresh", "traps", "seed"]) {
    const text = String(values[name]);
    if (!/^\d+$/.test(text)) return { error: `--${name} ${text}: not a whole number` };
    counts[name] = Number(text);
  }
  const only = String(values.only);
  return {
    warm: counts.warm,
    fresh: counts.fresh,
    trapsPerKind: counts.traps,
    seed: counts.seed,
    only: only === "" ? null : only.split(","),
    sim: values.sim === true,
    api,
  };
}
