import { describe, expect, it } from "vitest";
import { shown } from "../../dashboard/js/format.js";

describe("the dashboard shows recorded text's direction controls instead of obeying them", () => {
  it("Should write every bidi embedding, override, isolate and mark as a visible code point", () => {
    // "Refund order #A-1 \u202Egpj.exe" reads as "…exe.jpg" when the override is obeyed (Trojan Source).
    expect(shown("invoice\u202Egpj.exe")).toBe("invoice⟨U+202E⟩gpj.exe");
    const controls = ["\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"];
    for (const c of controls) {
      const out = shown(`a${c}b`);
      expect(out).toMatch(/^a⟨U\+[0-9A-F]{4}⟩b$/);
      expect(out).not.toContain(c);
    }
  });

  it("Should leave other text, right-to-left scripts and markup-looking text as they are (they are text nodes)", () => {
    expect(shown("مرحبا שלום")).toBe("مرحبا שלום");
    expect(shown(`<img src=x onerror="alert(1)">`)).toBe(`<img src=x onerror="alert(1)">`);
    expect(shown("Zoë 🙂")).toBe("Zoë 🙂");
  });
});
