import { describe, expect, it } from "vitest";
import { intake } from "../../tools/eval-workflows/intake";
import { bookingDesk } from "../../tools/eval-workflows/booking";
import { refundDesk } from "../../tools/eval-workflows/refund";
import { refundMail } from "../../tools/eval-workflows/refund-mail";
import { screenDesk } from "../../tools/eval-workflows/screen";
import { experiment, type Chat } from "../../tools/eval-workflows/run";
import type { Workflow } from "../../tools/eval-workflows/types";
import { chatAsSent } from "./helpers";

const chatVia: Chat = chatAsSent;

/**
 * The small form of `npm run eval:templates`: warm a few cases, then run new
 * cases and traps (values above the warm range, above a threshold, a status,
 * plan or country never seen, a missing record). No answer may differ from
 * the model's own; templates must serve some wherever an answer copies every
 * value that varies.
 */
describe("template evaluation (small)", () => {
  const workflows: Array<[string, Workflow<unknown>]> = [
    ["wf-refund", refundDesk as Workflow<unknown>],
    ["wf-intake", intake as Workflow<unknown>],
    ["wf-screen", screenDesk as Workflow<unknown>],
    ["wf-rmail", refundMail as Workflow<unknown>],
    ["wf-book", bookingDesk as Workflow<unknown>],
  ];
  for (const [prefix, wf] of workflows) {
    for (const mode of ["learned", "declared"] as const) {
      it(`Should serve ${wf.name} from ${mode} templates with no wrong replay`, { timeout: 120_000 }, async () => {
        const tag = crypto.randomUUID().slice(0, 8);
        const result = await experiment(wf, prefix, chatVia, { mode, warm: 8, fresh: 16, trapsPerKind: 1, seed: 7, tag });
        expect([...result.warm.mismatches, ...result.fresh.mismatches, ...result.traps.mismatches]).toEqual([]);
        expect(result.warm.wrongRuns + result.fresh.wrongRuns + result.traps.wrongRuns).toBe(0);
        // The refund desk never copies the customer's last name into an answer, the screening desk decides on
        // values it never copies (a city table, ticket parity, a VIP set), and the booking desk's names are tied
        // to no email (words, like its places): those stay structural, so learned templates cannot serve these
        // workflows (a miss is the right outcome there).
        if (mode === "learned" && ["wf-refund", "wf-screen", "wf-book"].includes(prefix)) expect(result.fresh.served.learned).toBe(0);
        // The intake's plans and countries make 8 classes of their own, each confirmed apart: this small run may
        // serve none of the declared ones (docs/templates.md has the full eval); only its correctness is asserted above.
        else if (prefix !== "wf-screen" && !(mode === "declared" && prefix === "wf-intake")) {
          // The booking desk's declared tree serves its dates through learned templates (its exact declared answers repeat rarely).
          expect(prefix === "wf-book" ? result.fresh.served.declared + result.fresh.served.learned : result.fresh.served[mode]).toBeGreaterThan(0);
        }
        expect(result.traps.runs).toBe(wf.traps.length);
      });
    }
  }
});
