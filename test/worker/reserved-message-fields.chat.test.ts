import { describe, expect, it } from "vitest";
import { chat, recorded, uniqueModel } from "./helpers";
import { completion, withUpstream } from "./upstream-stub";

/**
 * A chat request message carrying a field spelled like a stored answer's envelope
 * (muscle-mem:choice / muscle-mem:response / muscle-mem:once), which the hash form leaves out.
 */

type Fields = Record<string, unknown>;

describe("chat: a request message carrying envelope keys", () => {
  for (const field of ["muscle-mem:choice", "muscle-mem:response", "muscle-mem:once"]) {
    it(`Should not serve a request whose assistant message carries ${field} the answer recorded without it`, async () => {
      const model = uniqueModel("reserved-chat");
      const base = [
        { role: "user", content: "Refund order A-1." },
        { role: "assistant", content: "Done." },
        { role: "user", content: "Thanks." },
      ];
      const plain = { model, messages: base };
      await withUpstream({ json: completion({ role: "assistant", content: "You are welcome." }) }, async () => (await chat(plain)).arrayBuffer());
      await recorded(plain);
      const value = field === "muscle-mem:once" ? ["x"] : { note: "the upstream reads this message field" };
      const withField = { model, messages: [base[0], { ...base[1], [field]: value }, base[2]] };
      const seen: Fields[] = [];
      const res = await withUpstream(
        (sent) => {
          seen.push(sent);
          return { json: completion({ role: "assistant", content: "Other." }) };
        },
        () => chat(withField),
      );
      await res.arrayBuffer();
      expect(res.headers.get("muscle-mem-cache")).not.toBe("hit");
      expect(seen).toHaveLength(1);
    });
  }
});
