import { canonicalJson } from "../../core/canonical";
import { JsonEventStream } from "../../core/json-event-stream";
import { bodySpellings, type Spelling } from "../../core/number-text";
import { spellingsUnder } from "../../core/spelled-json";

/**
 * An item as the comparison of the streamed items with the completed output reads it: canonical JSON without its
 * `id` and `encrypted_content`, which an upstream may issue afresh in each event for the same item (OpenAI encrypts
 * a reasoning item's content again for `response.completed`, same plaintext, another IV; Copilot renews ids too).
 * The completed response's are the ones recorded.
 */
function itemText(item: unknown): string {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return canonicalJson(item);
  const { id: _id, encrypted_content: _encrypted, ...rest } = item as Record<string, unknown>;
  return canonicalJson(rest);
}

interface StreamEvent {
  type?: string;
  response?: unknown;
  error?: unknown;
  output_index?: unknown;
  item?: unknown;
}

/**
 * Reads a streamed Responses answer from raw bytes cut anywhere: the
 * `response.completed` event carries the whole response. `result()` is null
 * unless the stream reached it without `error` (an event of that type or name, or one carrying an `error`
 * object), `response.failed` or `response.incomplete`, and with every event's data exactly what JSON.parse read;
 * and null when the completed response's `output` is not the items the stream finished (`output_item.done`,
 * ids and encrypted content aside: see `itemText`): an upstream whose `response.completed` leaves them out (the
 * Codex backend sends `output: []`) or says other items would be recorded without what the client was streamed.
 */
export class ResponsesStreamReader extends JsonEventStream<StreamEvent> {
  private response: unknown = null;
  /** Each finished item's canonical JSON, at its `output_index`. */
  private readonly items: string[] = [];
  /** The completed response's numbers written otherwise than JSON.stringify would (pointers from the response). */
  spelled: Spelling[] = [];
  /** The completed response's fields are recorded as sent (src/providers/responses/envelope.ts). */
  protected override readonly exact = "all";

  /** An `event: error` fails the stream whatever its data. */
  protected override isFailureEvent(name: string | undefined): boolean {
    return name === "error";
  }

  protected onEvent(event: StreamEvent, data: string): void {
    // An event carrying an error object (a gateway's `{"error": …}`, no type): the openai package throws on it.
    if (event.error !== undefined && event.error !== null) {
      this.failed = true;
      return;
    }
    if (event.type === "response.output_item.done") {
      const index = event.output_index ?? this.items.length;
      // A place in the list, taken once: an item at -1, or two at one index, is not one output.
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || this.items[index] !== undefined) this.failed = true;
      else this.items[index] = itemText(event.item);
    } else if (event.type === "response.completed") {
      this.response = event.response ?? null;
      this.spelled = spellingsUnder(bodySpellings(data, "", false)?.top ?? [], "/response");
      this.done = true;
    } else if (event.type === "error" || event.type === "response.failed" || event.type === "response.incomplete") {
      this.failed = true;
    }
  }

  /** The completed `response` object, or null when the stream was cut or failed. */
  result(): unknown {
    this.end();
    return this.done && !this.failed && this.outputIsStreamed() ? this.response : null;
  }

  /** Whether the completed output is the streamed items, in order (any output when the stream sent no item events). */
  private outputIsStreamed(): boolean {
    if (this.items.length === 0) return true;
    const output = (this.response as { output?: unknown } | null)?.output;
    if (!Array.isArray(output) || output.length !== this.items.length) return false;
    return output.every((item, i) => this.items[i] !== undefined && itemText(item) === this.items[i]);
  }
}
