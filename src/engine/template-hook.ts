import type { RequestKey } from "../cache/request-key";
import type { TemplateHook } from "../cache/provider";
import { treeLearnerOf } from "../store/objects/tree-objects";
import { forgetTemplatePresence, learnerNews, planTemplates, readBindings } from "./templates";
import { forgetTemplateFree } from "./lookup/childless";

/** Declared variables (`muscle-mem-bindings`, a malformed header is a 400) and learned templates. */
export const chatTemplates: TemplateHook<RequestKey> = {
  plan(concrete, headers, env, settings) {
    const plan = planTemplates(concrete, readBindings(headers), headers, settings);
    const treeId = plan.key.treeId;
    return {
      key: plan.key,
      render: (answer, store) => plan.render(answer, store),
      learned: (db, timeoutMs, presenceTtlMs, hasTemplates) => plan.learned(db, timeoutMs, presenceTtlMs, hasTemplates),
      hitHeaders: plan.hitHeaders,
      templateMiss: () => plan.templateMiss(),
      afterUnrecorded: (db) => plan.unrecorded(db),
      async afterRecord(recorded, db) {
        // A declared answer notes the binding it was given for (a second distinct one lets it serve other values).
        await plan.confirm(db, recorded);
        if (!plan.induction) return;
        // Learning runs in its own object per tree, in its alarm: this only queues the recording there.
        const soFar = await treeLearnerOf(env, treeId).learnSoon(recorded);
        // Only a new template can turn "this tree has none" into "it has some"; otherwise keep the memo.
        if (learnerNews(treeId, soFar)) {
          forgetTemplatePresence(treeId);
          forgetTemplateFree(treeId);
        }
      },
    };
  },
};
