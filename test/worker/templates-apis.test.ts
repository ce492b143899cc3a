import { describe, expect, it } from "vitest";
import { api, newKey, ok, onlyTree } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { APIS, type Api, FOURTH, ORDERS, upstreamCalls } from "./templates-apis.support";

/**
 * Learned templates on every API: the same refund desk (the model copies an order id and an email from the
 * user's message into a `get_order` call) through Chat Completions, Gemini's OpenAI-compatible chat route,
 * Anthropic Messages, Responses and native Gemini. On every route three distinct orders teach a template the
 * tree lists, and a fourth order is served from it (`muscle-mem-template`) with its own values in the call, in
 * the API's own shape: the routes keyed as chat is directly, the other three through their template views
 * (src/cache/templates/view.ts; docs/templates.md, "Which APIs"). Before the views, those three learned nothing.
 */ interface TemplateSummary {
  id: string;
  bindings: number;
  confirmed: boolean;
  refuted: boolean;
}

/** Sends the three orders (each a miss the model answers with its call), runs the learning they queued, and reads the tree's templates. */
async function teach(apiOf: Api, key: string, model: string): Promise<{ tree: string; templates: TemplateSummary[] }> {
  await settled(async () => {
    for (const [order, email] of ORDERS) {
      const res = await apiOf.send(key, model, order, email);
      expect(res.status).toBe(200);
      expect(res.headers.get("muscle-mem-cache")).toBe("miss");
      expect(apiOf.call(await res.json())).toEqual({ name: "get_order", args: { order_id: order, email } });
    }
  });
  await learningRan();
  const tree = (await onlyTree(key)).id;
  let page: { data: TemplateSummary[] } = { data: [] };
  // Learning writes land in the learner's alarm: poll until a confirmed one is listed (or give up and assert).
  await eventually(
    async () => {
      page = await ok(api(`/trees/${tree}/templates`, { token: key }));
      return page.data.some((t) => t.confirmed);
    },
    apiOf.learns ? 10_000 : 3_000,
  ).catch(() => undefined);
  return { tree, templates: page.data };
}

/** The fourth order, with what its response says of templates and the call it holds. */
async function fourth(apiOf: Api, key: string, model: string) {
  return settled(async () => {
    const res = await apiOf.send(key, model, FOURTH[0], FOURTH[1]);
    return { cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template"), call: apiOf.call(await res.json()) };
  });
}

const learning = Object.keys(APIS).filter((n) => APIS[n].learns);

describe.each(learning)("learned templates on %s", (name) => {
  const apiOf = APIS[name];
  it("Should list a confirmed template after three orders and serve a fourth from it, with the fourth's order id and email in the call", async () => {
    const key = newKey();
    const model = uniqueModel(`tpl-${name}`);
    const { templates } = await teach(apiOf, key, model);
    const template = templates.find((t) => t.confirmed && !t.refuted);
    expect(template, JSON.stringify(templates)).toBeDefined();
    expect(template?.bindings).toBeGreaterThanOrEqual(3);
    expect(await fourth(apiOf, key, model)).toEqual({
      cache: "hit",
      template: template?.id,
      call: { name: "get_order", args: { order_id: FOURTH[0], email: FOURTH[1] } },
    });
    expect(upstreamCalls()).toBe(3);
  });
});
