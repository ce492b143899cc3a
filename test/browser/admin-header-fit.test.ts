import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ADMIN, importOtherTenant, login, newPage, OUT, skip, useUsableDesk, walk, WIDTHS } from "./usable-desk";

/**
 * The admin's header and tenant menu at 390, 1024 and 1400 px: the tenant menu shows its whole label
 * (at 1024 px it was cut to "every tenant ("), the identity badge and Sign out stay on screen, and the
 * page never scrolls sideways.
 */
describe.skipIf(skip)("the admin's header and tenant menu fit every width", () => {
  useUsableDesk(async () => {
    await walk("refund", "A-1", 25);
    await importOtherTenant();
  });

  it("Should show the tenant menu's whole label and keep the header on screen (all widths)", async () => {
    for (const size of WIDTHS) {
      const { page, errors, close } = await newPage(size);
      await login(page, ADMIN);
      await page.waitForSelector(".tree-card");
      await page.waitForSelector("#filter-tenant option[value='']", { state: "attached" });
      const fit = await page.locator("#filter-tenant").evaluate((el) => {
        const select = el as unknown as { options: ArrayLike<{ text: string }>; selectedIndex: number };
        const style = getComputedStyle(el);
        const ctx = document.createElement("canvas").getContext("2d");
        if (!ctx) throw new Error("no canvas");
        ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const label = select.options[select.selectedIndex]?.text ?? "";
        // The label, the select's padding and about 24 px of drop-down arrow must fit in its width.
        const needed = ctx.measureText(label).width + parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) + 24;
        return { label, needed, width: el.getBoundingClientRect().width };
      });
      expect(fit.label).toMatch(/^every tenant \(2\)$/);
      expect(fit.needed).toBeLessThanOrEqual(fit.width);
      for (const id of ["whoami", "logout"]) {
        const box = await page.locator(`#${id}`).evaluate((el) => ({ right: el.getBoundingClientRect().right, inner: window.innerWidth }));
        expect(box.right).toBeLessThanOrEqual(box.inner);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      await page.screenshot({ path: resolve(OUT, `admin-header-${size.name}.png`) });
      expect(errors).toEqual([]);
      await close();
    }
  });
});
