/**
 * `db` with every call to D1 counted: a statement run (all, first, run, raw)
 * or a batch is one call, however many statements the batch holds. Under
 * `wrangler dev` each call is also inspector traffic that wrangler relays.
 */
export function counted(db: D1Database): { db: D1Database; calls: () => number } {
  let calls = 0;
  const real = new WeakMap<object, D1PreparedStatement>();
  const statement = (s: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(s, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...values: unknown[]) => statement(target.bind(...values));
        if (["all", "first", "run", "raw"].includes(String(property))) calls++;
        return (...args: unknown[]) => Reflect.apply(value, target, args) as unknown;
      },
    });
    real.set(proxy, s);
    return proxy;
  };
  const proxy = new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property === "prepare") return (query: string) => statement(target.prepare(query));
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          calls++;
          return target.batch(statements.map((s) => real.get(s) ?? s));
        };
      }
      return typeof value === "function" ? (...args: unknown[]) => Reflect.apply(value, target, args) as unknown : value;
    },
  });
  return { db: proxy, calls: () => calls };
}
