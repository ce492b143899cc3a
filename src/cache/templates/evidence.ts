import { canonicalJson } from "../../core/canonical";
import { splitEnvelope } from "../../core/envelope";
import type { CanonicalMessage } from "../../core/messages";
import type { Trajectory, LearnedTemplate } from "./induce";
import { decomposeOnce, type Decomposed } from "./leaves";
import { bind, bindingDigest, isWordSlot, MAX_BINDINGS, MAX_VALUES, refusal, renderAnswer, type Binding, type Slot, type TemplateState } from "./learned";
import { tiedWords } from "./name-ties";
import { noteOrders } from "./orders";
import { compareRanged, fixedPartOf, isRanged, shapeOf, slotTypeOf } from "./slot-types";

/**
 * What a new model answer says about a template:
 * - `confirmed`: it fits and the template renders exactly that answer (one more binding);
 * - `refuted`: it fits inside everything the template would serve, yet the model answered otherwise;
 * - `fenced`: it fits only outside a numeric range, or with a shape never seen, and the model answered otherwise (the range must not grow there, the shape is never added);
 * - `unrelated`: it does not fit.
 */
export type Outcome = "confirmed" | "refuted" | "fenced" | "unrelated";

/** Whether every value has its slot's type, and every word is tied to an identity in the run (an untied word is never served, so it neither confirms nor refutes). */
function typesFit(slots: readonly Slot[], binding: Binding, tied: () => ReadonlySet<string>): boolean {
  return slots.every((slot, i) => slotTypeOf(binding.values[i], binding.kinds[i]) === slot.type && (!isWordSlot(slot) || tied().has(binding.values[i])));
}

function sameAnswer(rendered: CanonicalMessage | null, answer: CanonicalMessage): boolean {
  // The message decides; the envelopes of two responses differ (splitEnvelope).
  return rendered !== null && canonicalJson(splitEnvelope(rendered).message) === canonicalJson(splitEnvelope(answer).message);
}

/** Adds one confirming value to a slot; false when it would cross a fence. */
function confirmSlot(slot: Slot, value: string): boolean {
  if (!slot.values.includes(value) && slot.values.length < MAX_VALUES) slot.values.push(value);
  const shape = shapeOf(value);
  if (!slot.shapes.includes(shape) && !slot.fencedShapes?.includes(shape)) slot.shapes.push(shape);
  if (!isRanged(slot.type) || slot.min === undefined || slot.max === undefined) return true;
  if (compareRanged(slot.type, value, slot.min) < 0) slot.min = value;
  if (compareRanged(slot.type, value, slot.max) > 0) slot.max = value;
  if (slot.fenceLow !== undefined && compareRanged(slot.type, slot.min, slot.fenceLow) <= 0) return false;
  if (slot.fenceHigh !== undefined && compareRanged(slot.type, slot.max, slot.fenceHigh) >= 0) return false;
  return true;
}

/**
 * Records the shapes of a counter-example that the slot has not seen: the
 * model answered otherwise there, so a later confirmation must not open them
 * (the template would then serve the counter-example's kind of value).
 */
function fenceShape(slot: Slot, value: string): boolean {
  const shape = shapeOf(value);
  if (slot.shapes.includes(shape) || slot.fencedShapes?.includes(shape)) return false;
  slot.fencedShapes = [...(slot.fencedShapes ?? []), shape];
  return true;
}

/** Records the fixed part (fixedPartOf) of a counter-example that no value of the slot had: never served after. */
function fencePart(slot: Slot, value: string): boolean {
  const part = fixedPartOf(slot.type, value);
  if (part === null || slot.fencedParts?.includes(part) || slot.values.some((v) => fixedPartOf(slot.type, v) === part)) return false;
  slot.fencedParts = [...(slot.fencedParts ?? []), part];
  return true;
}

/** Records a counter-example outside a range as the nearest fence on that side. */
function fenceSlot(slot: Slot, value: string): boolean {
  if (!isRanged(slot.type) || slot.min === undefined || slot.max === undefined) return false;
  if (compareRanged(slot.type, value, slot.max) > 0) {
    if (slot.fenceHigh === undefined || compareRanged(slot.type, value, slot.fenceHigh) < 0) slot.fenceHigh = value;
    return true;
  }
  if (compareRanged(slot.type, value, slot.min) < 0) {
    if (slot.fenceLow === undefined || compareRanged(slot.type, value, slot.fenceLow) > 0) slot.fenceLow = value;
    return true;
  }
  return false;
}

/**
 * Weighs a trajectory the model produced against a template found under its
 * lookup key, and returns the template's new state. Pure: the caller stores it.
 */
export function weigh(template: LearnedTemplate, t: Trajectory, suffix?: readonly Decomposed[]): { outcome: Outcome; state: TemplateState } {
  const { pattern } = template;
  const state: TemplateState = structuredClone(template.state);
  const parts = suffix ?? t.messages.slice(pattern.anchorDepth).map(decomposeOnce);
  const binding = bind(pattern, parts, state.slots.length);
  if (!binding || state.refuted) return { outcome: "unrelated", state };
  const same = pattern.answer.finishReason === t.meta.finishReason && sameAnswer(renderAnswer(pattern, binding.values), t.answer);
  let ties: ReadonlySet<string> | undefined;
  const tied = () => (ties ??= tiedWords(t.messages));
  const fit = typesFit(state.slots, binding, tied);
  if (same) {
    if (!fit) return { outcome: "unrelated", state };
    const crossed = state.slots.map((slot, i) => confirmSlot(slot, binding.values[i])).some((ok) => !ok);
    if (crossed) return { outcome: "refuted", state: { ...state, refuted: true } };
    noteOrders(state.slots, state.orders, binding.values);
    const digest = bindingDigest(binding.values);
    if (!state.bindings.includes(digest) && state.bindings.length < MAX_BINDINGS) state.bindings.push(digest);
    return { outcome: "confirmed", state };
  }
  if (fit && refusal(state, binding, tied(), pattern) === null) return { outcome: "refuted", state: { ...state, refuted: true } };
  // Every slot is fenced (no short cut): the outcome is stored when any of them changed.
  const fenced =
    fit &&
    state.slots
      .map((slot, i) => [fenceShape(slot, binding.values[i]), fenceSlot(slot, binding.values[i]), fencePart(slot, binding.values[i])].includes(true))
      .includes(true);
  return { outcome: fenced ? "fenced" : "unrelated", state };
}
