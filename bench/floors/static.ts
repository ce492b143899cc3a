/**
 * The bench's static floor: a bare Hono Worker answering one small JSON body
 * to every request, run by the bench under the same `wrangler dev` as the
 * Worker (bench/floors.ts). What a hit is compared with.
 */
import { Hono } from "hono";

const app = new Hono();
const BODY = { ok: true, floor: "static" };
app.all("*", (c) => c.json(BODY));

export default app;
