import { JsonEventStream } from "../../core/json-event-stream";
import { bodySpellings, type Spelling } from "../../core/number-text";
import { spellingsUnder } from "../../core/spelled-json";

interface StreamEvent {
  type?: string;
  response?: unknown;
  error?: unknown;
}

/**
 * Reads a streamed Responses answer from raw bytes cut anywhere: the
 * `response.completed` event carries the whole response. `result()` is null
 * unless the stream reached it without `error` (an event of that type or name, or one carrying an `error`
 * object), `response.failed` or `response.incomplete`, and with every event's data exactly what JSON.parse read.
 */
export class ResponsesStreamReader extends JsonEventStream<StreamEvent> {
  private response: unknown = null;
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
    if (event.type === "response.completed") {
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
    return this.done && !this.failed ? this.response : null;
  }
}
