import { refundDeskScript } from "./refund-desk";
import { startScriptedModel, type ChatBody, type ScriptReply, type ScriptedModel } from "./scripted-model";

/**
 * The upstream for tests: a scripted model whose behaviour is chosen by the
 * request's `model`, so that tests running in workerd can steer it without
 * shared state, and count its generations per model name.
 *
 * - any model: the refund-desk script (tools/refund-desk.ts)
 * - `error-<status>[-...]`: answers that HTTP status with an OpenAI error body
 * - `echo[-...]`: answers the last user message back as text
 * - `fresh[-...]`: answers a new random text every time (a non-deterministic model)
 * - `slow-<ms>[-...]`: answers after a delay
 * - `truncate[-...]`: a stream that stops before `[DONE]`; JSON that is cut short
 *
 * `GET /__count?model=M` answers `{generations, requests}` for that model.
 */
export async function startTestUpstream(port = 0): Promise<ScriptedModel & { count: (model: string) => { generations: number; requests: number } }> {
  const generations = new Map<string, number>();
  const script = async (body: ChatBody): Promise<ScriptReply> => {
    const model = body.model;
    const status = /^error-(\d{3})/.exec(model);
    if (status) return { status: Number(status[1]), body: { error: { message: `scripted ${status[1]}`, type: "server_error", code: `upstream_${status[1]}` } } };
    const slow = /^slow-(\d+)/.exec(model);
    if (slow) await new Promise((r) => setTimeout(r, Number(slow[1])));
    generations.set(model, (generations.get(model) ?? 0) + 1);
    if (model.startsWith("echo")) {
      const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
      return { role: "assistant", content: `echo: ${String(lastUser?.content ?? "")}` };
    }
    if (model.startsWith("fresh")) return { role: "assistant", content: `fresh ${crypto.randomUUID()}` };
    return refundDeskScript(body);
  };
  const model = await startScriptedModel({ script, port, truncate: (body) => body.model.startsWith("truncate") });
  const count = (name: string) => ({ generations: generations.get(name) ?? 0, requests: model.requests.filter((r) => r.model === name).length });
  model.onGet = (url) => {
    const name = url.searchParams.get("model");
    return url.pathname.endsWith("/__count") && name !== null ? count(name) : undefined;
  };
  return Object.assign(model, { count });
}
