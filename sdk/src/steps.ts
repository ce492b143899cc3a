import { canonicalJson, decodeValue, encodeValue, type Json } from "./json.js";
import type { SkillKey, StepArg } from "./types.js";

/**
 * Params worth recognising in tool arguments. Booleans, null, undefined and the
 * empty string are left out: they are low-cardinality values that steer
 * behaviour, so a `true` argument must stay a literal even when some param is
 * `true` too.
 */
function paramIndex(params: Record<string, unknown>): Map<string, string> {
  const index = new Map<string, string>();
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (value === null || value === undefined || value === "" || typeof value === "boolean") continue;
    let encoded: Json;
    try {
      encoded = encodeValue(value);
    } catch {
      continue; // a param that cannot be stored cannot be recognised either
    }
    const canonical = canonicalJson(encoded);
    if (!index.has(canonical)) index.set(canonical, key);
  }
  return index;
}

/**
 * Encodes a call's arguments for storage. An argument equal (deeply) to a run
 * param is stored as a reference to it, so a replay with other params uses the
 * new value. Throws NotSerialisableError for arguments that cannot be stored.
 */
export function encodeArgs(args: readonly unknown[], params: Record<string, unknown>): StepArg[] {
  const index = paramIndex(params);
  return args.map((arg, i) => {
    const value = encodeValue(arg, `args[${i}]`);
    const param = index.get(canonicalJson(value));
    return param === undefined ? { value } : { param };
  });
}

/** The live arguments of a stored step, or undefined when a referenced param is missing. */
export function resolveArgs(args: readonly StepArg[], params: Record<string, unknown>): unknown[] | undefined {
  const out: unknown[] = [];
  for (const arg of args) {
    if ("param" in arg) {
      if (!Object.hasOwn(params, arg.param)) return undefined;
      out.push(params[arg.param]);
    } else {
      out.push(decodeValue(arg.value));
    }
  }
  return out;
}

/**
 * A string that is equal for two steps exactly when they would make the same
 * call under `params`. Param references count as the value they resolve to.
 */
export function callIdentity(tool: string, args: readonly StepArg[], params: Record<string, unknown>): string {
  const parts: Json[] = args.map((arg) => {
    if (!("param" in arg)) return arg.value;
    try {
      return encodeValue(params[arg.param]);
    } catch {
      return { param: arg.param };
    }
  });
  return canonicalJson([tool, parts]);
}

/**
 * The key a run's skills are filed under: its sorted tags, or, without tags, its
 * task text with each string param value replaced by `{{name}}`.
 *
 * @example skillKey("greet erik", [], { name: "erik" }) // { task: "greet {{name}}" }
 */
export function skillKey(task: string, tags: readonly string[], params: Record<string, unknown>): SkillKey {
  if (tags.length > 0) return { tags: [...new Set(tags)].sort() };
  const replacements = Object.entries(params)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1].length > 0)
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  let template = task;
  for (const [name, value] of replacements) template = template.split(value).join(`{{${name}}}`);
  return { task: template };
}

export function keyString(key: SkillKey): string {
  return canonicalJson("tags" in key ? { tags: key.tags } : { task: key.task });
}
