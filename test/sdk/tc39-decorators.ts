import { transform } from "esbuild";
import type { Plugin } from "vite";

/**
 * Vite 8 compiles TypeScript with oxc, which only lowers legacy
 * (experimentalDecorators) decorators; Node 20 cannot run standard ones. This
 * plugin lowers TC39 standard decorators with esbuild first, only in files
 * that use them, so `@engine.method()` runs under vitest as it does under tsx.
 */
export function tc39Decorators(): Plugin {
  return {
    name: "muscle-mem:tc39-decorators",
    enforce: "pre",
    async transform(code, id) {
      if (id.includes("/node_modules/") || !/\.[cm]?tsx?$/.test(id.split("?")[0])) return null;
      // Cheap pre-filter; a false positive (an "@" in a string) only costs an esbuild pass.
      if (!/@[A-Za-z_$][\w$.]*/.test(code)) return null;
      const out = await transform(code, {
        loader: id.endsWith("x") ? "tsx" : "ts",
        format: "esm",
        target: "es2022",
        sourcemap: true,
        sourcefile: id,
        tsconfigRaw: { compilerOptions: { experimentalDecorators: false, useDefineForClassFields: true } },
      });
      return { code: out.code, map: out.map };
    },
  };
}
