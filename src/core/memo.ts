/**
 * A bounded string-keyed memo that an isolate keeps between requests. It is
 * bounded by the characters of its keys and values (oldest entries go
 * first), so a long-lived isolate never grows it without limit.
 */
export class BoundedMemo<V> {
  private readonly entries = new Map<string, { value: V; chars: number }>();
  private chars = 0;

  constructor(
    private readonly maxChars: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: V): void {
    const chars = key.length + this.sizeOf(value);
    if (chars > this.maxChars / 4 || this.entries.has(key)) return;
    while (this.chars + chars > this.maxChars) {
      const oldest = this.entries.entries().next().value;
      if (!oldest) break;
      this.entries.delete(oldest[0]);
      this.chars -= oldest[1].chars;
    }
    this.entries.set(key, { value, chars });
    this.chars += chars;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.chars = 0;
  }
}
