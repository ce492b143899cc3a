import { INDUCTION_HEADER } from "../../core/protocol";

/** How templates behave, from the Worker's vars. */
export interface TemplateSettings {
  /** `TEMPLATE_INDUCTION` (default `on`): `off` neither learns templates nor serves learned ones. */
  induction: boolean;
  /** `TEMPLATE_MIN_BINDINGS` (default 3, 2..16): distinct bindings (and distinct values per slot) before a learned template serves. */
  minBindings: number;
  /**
   * `DECLARED_MIN_BINDINGS` (default 2, 2..16): distinct bindings whose model answer a declared answer
   * must equal before it serves other values (its own binding is always served).
   */
  declaredMinBindings: number;
  /**
   * Templates tried per lookup, deepest anchor first (bounded work on an exact miss); a lookup reads one more
   * and misses when it finds it (learnedOutcome): 32, what learning weighs (store/templates/learn.ts MAX_WEIGHED).
   */
  maxTried: number;
}

export const DEFAULT_MIN_BINDINGS = 3;
export const DEFAULT_DECLARED_MIN_BINDINGS = 2;

/** Whether a request turned induction off (`muscle-mem-induction: off`). */
export function inductionOffFor(headers: Headers): boolean {
  return (headers.get(INDUCTION_HEADER) ?? "").trim().toLowerCase() === "off";
}
