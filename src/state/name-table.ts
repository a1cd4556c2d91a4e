/**
 * Small integer codes for names (countries, categories), so typed arrays can hold them instead of
 * strings and per-name counting needs no string keys. Code 0 stands for "none" (null).
 */
export class NameTable {
  private readonly names: (string | null)[] = [null];
  private readonly codes = new Map<string, number>();
  /** The names in code order without "none", made when asked for after a name was added. */
  private list: readonly string[] | undefined;

  /** The code of a name, giving it the next code the first time it is seen. */
  codeOf(name: string | null): number {
    if (name === null) return 0;
    let code = this.codes.get(name);
    if (code === undefined) {
      code = this.names.length;
      this.names.push(name);
      this.codes.set(name, code);
      this.list = undefined;
    }
    return code;
  }

  /** The code of a name seen before, without adding it (0 when never seen). */
  find(name: string): number {
    return this.codes.get(name) ?? 0;
  }

  /** Every name, as one array until a name is added (so what is derived from it can be kept by it). */
  all(): readonly string[] {
    return (this.list ??= this.names.slice(1) as string[]);
  }

  nameOf(code: number): string | null {
    return this.names[code] ?? null;
  }

  /** One more than the largest code in use. */
  get size(): number {
    return this.names.length;
  }
}
