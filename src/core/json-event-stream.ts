import { createParser, type EventSourceParser } from "eventsource-parser";
import { scanJson } from "./exact-json";

/**
 * The part both stream assemblers share: server-sent events from raw bytes
 * cut anywhere (even inside a UTF-8 sequence), each event's data parsed as
 * JSON. Data that is not JSON fails the stream; once the stream is done or
 * failed, later events are ignored. Subclasses read the parsed events.
 */
export abstract class JsonEventStream<E> {
  /** Fatal: bytes that are not UTF-8 throw (the answer is not recorded) rather than become U+FFFD the model never sent. */
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  private readonly parser: EventSourceParser = createParser({ onEvent: (event) => this.onData(event.data, event.event) });
  protected done = false;
  protected failed = false;

  feed(bytes: Uint8Array): void {
    this.decoded(() => this.decoder.decode(bytes, { stream: true }));
  }

  /** Feeds what the decoder still holds (a stream cut inside a UTF-8 sequence fails): call once, before reading the result. */
  protected end(): void {
    this.decoded(() => this.decoder.decode());
  }

  /** Parses what `decode` gives; bytes that are not UTF-8 fail the stream. */
  private decoded(decode: () => string): void {
    if (this.failed) return;
    let text: string;
    try {
      text = decode();
    } catch {
      this.failed = true;
      return;
    }
    this.parser.feed(text);
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
    if (this.failed) return;
    if (this.done) {
      // After the end, only the end marker again (`[DONE]` twice): an error a gateway appends, or more content,
      // means the stream is not the answer its end closed (the openai package throws on such an error).
      if (this.isFailureEvent(name) || !(this.isEndMarker(data) || data.trim() === "[DONE]")) this.failed = true;
      return;
    }
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
