import { canonicalJson } from "../../src/core/canonical";
import { keyAnswer, keyRequest } from "../../src/providers/chat/key";
import { chatRequest, type CanonicalMessage } from "../../src/core/messages";
import type { RequestKey } from "../../src/cache/request-key";
import { parseBindings } from "../../src/cache/templates/bindings";
import { bindingDigestOf, declaredServes, hashForm, renderDeclared, withDeclared, type DeclaredConfirmation } from "../../src/cache/templates/declared";
import { shapeKeyOf, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { learnStep, type Partner } from "../../src/cache/templates/learn-step";
import { learnedLookup, learnedOutcome } from "../../src/cache/templates/learned-answer";
import { decompose } from "../../src/cache/templates/leaves";
import { headerSafe } from "../../src/cache/templates/miss-reason";
import type { NodeMeta } from "../../src/cache/templates/turns";
import type { ChatBody, ScriptedMessage } from "../scripted-model";
import type { Chat } from "./run";

/**
 * The cached flow of the Worker over the pure domain, in memory, for fast
 * tests of the template rules on the evaluation's workflows (no runtime, no
 * D1): exact hit (unanimous policy) → declared answer (confirmed by
 * `declaredMinBindings` bindings) → learned template → the model, whose answer
 * is recorded and learned from as src/store/templates/learn.ts does (the same
 * learnStep). Headers as the Worker sends them: `muscle-mem-cache`,
 * `muscle-mem-template`, `muscle-mem-template-miss`.
 */
export interface SimulatedWorker {
  chat: Chat;
  templates: () => LearnedTemplate[];
}

const MAX_PARTNERS = 4;
/** The Worker's bound on templates weighed by learning and tried by a lookup (MAX_WEIGHED, config maxTried). */
const MAX_TRIED = 32;

interface Recorded {
  hash: string;
  message: CanonicalMessage;
}

function apiMessage(m: CanonicalMessage, salt: string): ScriptedMessage {
  const calls = m.tool_calls?.map((c, i) => ({
    id: `call_${salt.slice(0, 8)}_${i}`,
    type: "function" as const,
    function: { name: c.function.name, arguments: c.function.arguments },
  }));
  return { role: "assistant", content: typeof m.content === "string" ? m.content : null, ...(calls ? { tool_calls: calls } : {}) };
}

function respond(message: ScriptedMessage, headers: Record<string, string>): Response {
  return new Response(JSON.stringify({ choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop" }] }), {
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A simulated Worker in front of `model` (a scripted workflow model). */
export function simulatedWorker(
  model: (body: ChatBody) => ScriptedMessage,
  opts: { minBindings?: number; declaredMinBindings?: number } = {},
): SimulatedWorker {
  const minBindings = opts.minBindings ?? 3;
  const declaredMin = opts.declaredMinBindings ?? 2;
  const answers = new Map<string, Recorded[]>();
  const declaredEvidence = new Map<string, DeclaredConfirmation[]>();
  const nodes = new Map<string, NodeMeta>();
  /** Each node's message as first stored (an answer as the model wrote it), as D1's nodes table keeps it. */
  const storedOf = new Map<string, CanonicalMessage>();
  const templates = new Map<string, LearnedTemplate>();
  const byShape = new Map<string, Array<Trajectory & { answerHash: string }>>();

  const candidatesFor = (keys: readonly string[], bound = MAX_TRIED) =>
    [...templates.values()]
      .filter((t) => !t.state.refuted && keys.includes(t.lookupKey))
      .sort((a, b) => b.pattern.anchorDepth - a.pattern.anchorDepth || b.state.bindings.length - a.state.bindings.length)
      .slice(0, bound);

  function learn(key: RequestKey, t: Trajectory, answerHash: string): void {
    const parts = t.messages.map(decompose);
    const lookup = learnedLookup(key);
    const shape = shapeKeyOf(t, parts);
    const partners: Partner[] = (byShape.get(shape) ?? [])
      .filter((p) => p.answerHash !== answerHash)
      .slice(0, MAX_PARTNERS)
      .map((p) => ({ ...p, nodes: p.hashes.map((h) => nodes.get(h)) }));
    const step = learnStep(
      t,
      parts,
      answerHash,
      t.hashes.map((h) => nodes.get(h)),
      candidatesFor(lookup.keys),
      partners,
    );
    for (const u of step.updated) templates.set(u.id, u);
    for (const f of step.fresh) if (!templates.has(f.id)) templates.set(f.id, f);
    if (!(byShape.get(shape) ?? []).some((p) => p.answerHash === answerHash)) byShape.set(shape, [{ ...t, answerHash }, ...(byShape.get(shape) ?? [])]);
  }

  const chat: Chat = async (raw, headers) => {
    const body = chatRequest.parse(raw);
    const keyed = keyRequest(body, headers.authorization ?? "", headers["muscle-mem-namespace"] ?? "");
    if (!keyed.ok) throw new Error(`not keyed: ${JSON.stringify(keyed)}`);
    const parsed = parseBindings(headers["muscle-mem-bindings"] ?? null);
    if (!parsed.ok) throw new Error(parsed.message);
    const key = (parsed.bindings && withDeclared(keyed.key, parsed.bindings)) || keyed.key;
    const induction = (headers["muscle-mem-induction"] ?? "").toLowerCase() !== "off";
    const binding = key.declared ? bindingDigestOf(key.declared) : "";
    let miss: string | null = null;
    const stored = answers.get(key.key) ?? [];
    if (stored.length === 1) {
      const [answer] = stored;
      if (!key.declared) return respond(apiMessage(answer.message, answer.hash), { "muscle-mem-cache": "hit" });
      const evidence = declaredEvidence.get(key.key) ?? [];
      const rendered = declaredServes(evidence, answer.hash, binding, declaredMin) ? renderDeclared(answer.message, key.declared) : null;
      if (rendered) return respond(apiMessage(rendered, answer.hash), { "muscle-mem-cache": "hit", "muscle-mem-template": "declared" });
      miss = "declared answer not yet confirmed";
    }
    if (induction) {
      const lookup = learnedLookup(key);
      const outcome = learnedOutcome(key, lookup, candidatesFor(lookup.keys, MAX_TRIED + 1), minBindings, MAX_TRIED);
      if ("answer" in outcome) {
        const message = key.declared ? renderDeclared(outcome.answer.message, key.declared) : outcome.answer.message;
        if (message) return respond(apiMessage(message, outcome.answer.hash), { "muscle-mem-cache": "hit", "muscle-mem-template": outcome.template });
      } else if (outcome.miss !== undefined) miss ??= headerSafe(outcome.miss); // as the Worker writes it (a header is bytes)
    }
    const truth = model(raw as ChatBody);
    const recorded = keyAnswer(key, truth as never);
    if (recorded) {
      if (!stored.some((s) => s.hash === recorded.hash)) answers.set(key.key, [...stored, { hash: recorded.hash, message: recorded.message }]);
      if (!storedOf.has(recorded.hash)) storedOf.set(recorded.hash, recorded.message);
      const meta = nodes.get(recorded.hash);
      nodes.set(recorded.hash, {
        finishReason: truth.tool_calls ? "tool_calls" : "stop",
        observations: (meta?.observations ?? 0) + 1,
        promptTokens: 10,
        completionTokens: 5,
        latencyMs: 50,
      });
      if (key.declared) declaredEvidence.set(key.key, [...(declaredEvidence.get(key.key) ?? []), { answer: recorded.hash, binding }]);
      if (induction) {
        const t: Trajectory = {
          root: key.treeId,
          hashes: key.path.map((s) => s.hash),
          messages: key.path.map((s) => hashForm(s.message)),
          stored: key.path.map((s) => storedOf.get(s.hash) ?? s.message),
          answer: JSON.parse(canonicalJson(recorded.message)) as CanonicalMessage,
          meta: { finishReason: truth.tool_calls ? "tool_calls" : "stop", promptTokens: 10, completionTokens: 5, latencyMs: 50 },
        };
        learn(key, t, recorded.hash);
      }
    }
    return respond(truth, { "muscle-mem-cache": "miss", ...(miss ? { "muscle-mem-template-miss": miss } : {}) });
  };
  return { chat, templates: () => [...templates.values()] };
}
