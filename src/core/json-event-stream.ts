import { createParser, type EventSourceParser } from "eventsource-parser";
import { scanJson } from "./exact-json";

/**
 * The part both stream assemblers share: server-sent events from raw bytes
 * cut anywhere (even inside a UTF-8 sequence), each event's data parsed as
 * JSON. Data that is not JSON fails the stream; once the stream is done or
 * failed, later events are ignored. Subclasses read the parsed events.
 */
export abstract class JsonEventStream<E> {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser = createParser({ onEvent: (event) => this.onData(event.data, event.event) });
  protected done = false;
  protected failed = false;

  feed(bytes: Uint8Array): void {
    this.parser.feed(this.decoder.decode(bytes, { stream: true }));
  }

  /** Feeds what the decoder still holds: call once, before reading the result. */
  protected end(): void {
    this.parser.feed(this.decoder.decode());
  }

  /** Whether `data` is a non-JSON end marker (chat's `[DONE]`); none by default. */
  protected isEndMarker(_data: string): boolean {
    return false;
  }

  /** Whether an event of this name fails the stream whatever its data (chat's `event: error`); none by default. */
  protected isFailureEvent(_name: string | undefined): boolean {
    return false;
  }

  /**
   * What of each event's data must parse to exactly its text, else the stream
   * fails: `all` (no number a double cannot hold, no repeated key or other key
   * workerd or validation would change) for an assembler that records fields
   * as sent; `keys` for one whose producer writes only doubles. Keys by default.
   */
  protected readonly exact: "all" | "keys" = "keys";

  /** Whether an event's text says what its parsed value loses and the subclass records (a number's spelling); none by default. */
  protected losesText(_data: string): boolean {
    return false;
  }

  /** One parsed event of a stream that is neither done nor failed, and its data's text. */
  protected abstract onEvent(event: E, data: string): void;

  private onData(data: string, name: string | undefined): void {
    if (this.done || this.failed) return;
    if (this.isFailureEvent(name)) {
      this.failed = true;
      return;
    }
    if (this.isEndMarker(data)) {
      this.done = true;
      return;
    }
    let event: E;
    try {
      event = JSON.parse(data) as E;
    } catch {
      this.failed = true;
      return;
    }
    if (scanJson(data, { numbers: this.exact === "all" }).lossy !== null || this.losesText(data)) {
      this.failed = true;
      return;
    }
    this.onEvent(event, data);
  }
}
