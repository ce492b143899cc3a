import type { Config } from "../config";

/**
 * The var that sets a provider's upstream base URL, and its default: each provider's registry entry declares
 * one (src/providers/<api>/index.ts), and src/config.ts keeps every `*_BASE_URL` var as set, so that a new
 * upstream is no new field there. Two APIs of one upstream (chat, responses) declare the same var.
 */
export interface UpstreamVar {
  /** The var's name, ending in `_BASE_URL` (`ANTHROPIC_BASE_URL`). */
  readonly name: `${string}_BASE_URL`;
  /** Its value when unset or blank. */
  readonly fallback: string;
}

/**
 * The upstream base URL `upstream` names, as set (a malformed one is kept: a typo must fail at the upstream, a
 * 502 naming the var, not send the caller's key to another provider), else its default; and the var's name,
 * for the envelope when the upstream cannot be reached.
 *
 * @example upstreamBase(config, OPENAI_UPSTREAM) // { base: "https://api.openai.com/v1", baseVar: "UPSTREAM_BASE_URL" }
 */
export function upstreamBase(config: Config, upstream: UpstreamVar): { base: string; baseVar: string } {
  return { base: config.upstreamBases[upstream.name] || upstream.fallback, baseVar: upstream.name };
}
