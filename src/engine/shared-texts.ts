/**
 * Texts that many entries of a store refer to, each kept once, by number, while an entry refers to it
 * (engine/recomm-pages.ts: the shapes of requests), within a bound of bytes: at most 2 bytes a character
 * and TEXT_OVERHEAD a text. A text that does not fit gets no number, and its entry keeps it itself.
 */
export class SharedTexts {
  private readonly numbers = new Map<string, number>();
  private readonly texts: string[] = [];
  private readonly references: number[] = [];
  /** Numbers no text holds, to be given again. */
  private readonly free: number[] = [];
  private held = 0;

  constructor(private readonly maxBytes: number) {}

  /** What the texts take: their characters, their strings, the map and the arrays. */
  get bytes(): number {
    return this.held;
  }

  /** Texts held. */
  get size(): number {
    return this.numbers.size;
  }

  /** The number of `text`, with one more reference to it; -1 when it does not fit. */
  acquire(text: string): number {
    let number = this.numbers.get(text);
    if (number === undefined) {
      const size = sizeOf(text);
      if (this.held + size > this.maxBytes) return -1;
      number = this.free.pop() ?? this.texts.length;
      this.numbers.set(text, number);
      this.texts[number] = text;
      this.references[number] = 0;
      this.held += size;
    }
    this.references[number]++;
    return number;
  }

  text(number: number): string {
    return this.texts[number];
  }

  /** Drops a reference; the text goes with its last. */
  release(number: number): void {
    if (--this.references[number] > 0) return;
    const text = this.texts[number];
    this.numbers.delete(text);
    this.texts[number] = '';
    this.free.push(number);
    this.held -= sizeOf(text);
  }
}

/** A string's header, its slots in the map and the arrays, and the map's room to grow. */
const TEXT_OVERHEAD = 96;

function sizeOf(text: string): number {
  return TEXT_OVERHEAD + 2 * text.length;
}
