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
  /** How a bare key for this upstream (an `/api` caller's `Authorization: Bearer <key>`) is re-checked (KEY_FRESH_MS). */
  readonly keyCheck: KeyCheck;
}

/**
 * A cheap call the upstream answers 2xx only for a key it accepts, and which it does not bill: its model list,
 * with the key sent the way its own clients send it (src/engine/key-freshness.ts).
 */
export interface KeyCheck {
  /** The name `credential_checks.provider` keeps for the upstream that last accepted a key (`openai`, `anthropic`). */
  readonly id: string;
  /** The model list's path (`/v1/models`). */
  readonly pathname: string;
  /** The prefix this upstream's keys have, when they have one (`sk-ant-`): a key of unknown provider is checked where its prefix says. */
  readonly keyPrefix?: string;
  /** The headers that carry `key` as the upstream's clients send it. */
  headers(key: string): Headers;
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
