/** Small integer codes for countries, so histories store a Uint16 instead of a string. 0 is global. */
export class CountryTable {
  private readonly codes: (string | null)[] = [null];
  private readonly indexes = new Map<string, number>();

  indexOf(country: string | null): number {
    if (country === null) return 0;
    let index = this.indexes.get(country);
    if (index === undefined) {
      index = this.codes.length;
      this.codes.push(country);
      this.indexes.set(country, index);
    }
    return index;
  }

  /** The index of a country seen before, without adding it (0 when never seen). */
  find(country: string): number {
    return this.indexes.get(country) ?? 0;
  }

  codeOf(index: number): string | null {
    return this.codes[index] ?? null;
  }
}
