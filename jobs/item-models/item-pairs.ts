import type { LakeDb } from '../lake/lake-db.js';

/** A user × item matrix by user, and the same entries by item: the two ways pairs are walked. */
export interface UserItemLists {
  users: number;
  items: number;
  /** By user: user u's entries are userOffsets[u] .. userOffsets[u + 1). */
  userOffsets: Int32Array;
  userItems: Int32Array;
  userValues: Float64Array;
  /** By item: item i's entries are itemOffsets[i] .. itemOffsets[i + 1). */
  itemOffsets: Int32Array;
  itemUsers: Int32Array;
  itemValues: Float64Array;
}

/** A copy of the first `length` entries of an array in a larger one. */
export function grown<T extends Int32Array | Float32Array | Float64Array>(
  array: T,
  size: number,
  length: number,
): T {
  const larger = new (array.constructor as new (size: number) => T)(size);
  larger.set(array.subarray(0, length));
  return larger;
}

/** Counting sort of (row, column, value) entries into row lists. */
function bucket(
  rows: number,
  row: Int32Array,
  column: Int32Array,
  value: Float64Array,
): { offsets: Int32Array; columns: Int32Array; values: Float64Array } {
  const offsets = new Int32Array(rows + 1);
  for (let k = 0; k < row.length; k++) offsets[row[k] + 1]++;
  for (let r = 0; r < rows; r++) offsets[r + 1] += offsets[r];
  const next = offsets.slice(0, rows);
  const columns = new Int32Array(row.length);
  const values = new Float64Array(row.length);
  for (let k = 0; k < row.length; k++) {
    const at = next[row[k]]++;
    columns[at] = column[k];
    values[at] = value[k];
  }
  return { offsets, columns, values };
}

/**
 * Reads a query's (user number, item number, value) rows, the users numbered 0.. and the items 0..items-1,
 * column by column in one pass: no object per row, and the query (a window over every row) run once.
 */
export async function readUserItemLists(lake: LakeDb, sql: string, items: number): Promise<UserItemLists> {
  let user = new Int32Array(1024);
  let item = new Int32Array(1024);
  let value = new Float64Array(1024);
  const result = await lake.db.stream(sql);
  let at = 0;
  let users = 0;
  for (
    let chunk = await result.fetchChunk();
    chunk && chunk.rowCount > 0;
    chunk = await result.fetchChunk()
  ) {
    if (at + chunk.rowCount > user.length) {
      const size = Math.max(user.length * 2, at + chunk.rowCount);
      [user, item, value] = [grown(user, size, at), grown(item, size, at), grown(value, size, at)];
    }
    const [u, i, v] = [0, 1, 2].map((column) => chunk.getColumnVector(column));
    for (let row = 0; row < chunk.rowCount; row++) {
      user[at] = u.getItem(row) as number;
      item[at] = i.getItem(row) as number;
      value[at++] = v.getItem(row) as number;
      if (user[at - 1] >= users) users = user[at - 1] + 1;
    }
  }
  [user, item, value] = [user.subarray(0, at), item.subarray(0, at), value.subarray(0, at)];
  const byUser = bucket(users, user, item, value);
  const byItem = bucket(items, item, user, value);
  return {
    users,
    items,
    userOffsets: byUser.offsets,
    userItems: byUser.columns,
    userValues: byUser.values,
    itemOffsets: byItem.offsets,
    itemUsers: byItem.columns,
    itemValues: byItem.values,
  };
}

/**
 * The sums over shared users of one item's pairs, Σ_u factor_u · value_ux · value_uy, for every item y
 * that shares a user with x, in a dense array reused from item to item: a tight loop over typed arrays,
 * where a self-join of the user × item table (as SQL would write it) builds and groups a row per pair and
 * user (200 users of 500 items each: 50 million rows, seconds on one thread).
 */
export class PairSums {
  /** The sums of the last `of(x)`, by item; zero elsewhere. */
  readonly sums: Float64Array;
  /** The items with a sum after `of(x)`: touched[0 .. count). */
  readonly touched: Int32Array;
  private readonly marks: Int32Array;
  private count = 0;

  constructor(
    private readonly lists: UserItemLists,
    /** A weight per user (1 for all when absent). */
    private readonly userFactor?: Float64Array,
  ) {
    this.sums = new Float64Array(lists.items);
    this.touched = new Int32Array(lists.items);
    this.marks = new Int32Array(lists.items).fill(-1);
  }

  /** Fills `sums` and `touched` for item x's pairs (x itself left out); returns how many there are. */
  of(x: number): number {
    const { itemOffsets, itemUsers, itemValues, userOffsets, userItems, userValues } = this.lists;
    const { sums, touched, marks, userFactor } = this;
    for (let t = 0; t < this.count; t++) sums[touched[t]] = 0;
    let count = 0;
    for (let k = itemOffsets[x]; k < itemOffsets[x + 1]; k++) {
      const u = itemUsers[k];
      const weight = itemValues[k] * (userFactor ? userFactor[u] : 1);
      for (let j = userOffsets[u]; j < userOffsets[u + 1]; j++) {
        const y = userItems[j];
        if (y === x) continue;
        if (marks[y] !== x) {
          marks[y] = x;
          touched[count++] = y;
        }
        sums[y] += weight * userValues[j];
      }
    }
    this.count = count;
    return count;
  }
}

/**
 * The `size` best of the items offered, best first: the higher weight, and of equal weights the lower
 * item (a bounded heap whose root is the worst kept).
 */
export class BestOf {
  private readonly ids: Int32Array;
  private readonly weights: Float32Array;
  private length = 0;

  constructor(private readonly size: number) {
    this.ids = new Int32Array(size);
    this.weights = new Float32Array(size);
  }

  clear(): void {
    this.length = 0;
  }

  /** Whether entry a ranks below entry b. */
  private worse(a: number, b: number): boolean {
    return (
      this.weights[a] < this.weights[b] || (this.weights[a] === this.weights[b] && this.ids[a] > this.ids[b])
    );
  }

  private swap(a: number, b: number): void {
    const id = this.ids[a];
    this.ids[a] = this.ids[b];
    this.ids[b] = id;
    const weight = this.weights[a];
    this.weights[a] = this.weights[b];
    this.weights[b] = weight;
  }

  private down(at: number): void {
    for (;;) {
      const left = 2 * at + 1;
      if (left >= this.length) return;
      const right = left + 1;
      const child = right < this.length && this.worse(right, left) ? right : left;
      if (!this.worse(child, at)) return;
      this.swap(child, at);
      at = child;
    }
  }

  offer(id: number, weight: number): void {
    if (this.size === 0) return;
    if (this.length < this.size) {
      let at = this.length++;
      this.ids[at] = id;
      this.weights[at] = weight;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (!this.worse(at, parent)) break;
        this.swap(at, parent);
        at = parent;
      }
      return;
    }
    if (weight < this.weights[0] || (weight === this.weights[0] && id > this.ids[0])) return;
    this.ids[0] = id;
    this.weights[0] = weight;
    this.down(0);
  }

  /** Empties the heap into ids/weights from `at` on, best first; returns how many were written. */
  drainInto(ids: Int32Array, weights: Float32Array, at: number): number {
    const kept = this.length;
    // Popping the worst first fills the run from its end.
    for (let end = kept - 1; end >= 0; end--) {
      ids[at + end] = this.ids[0];
      weights[at + end] = this.weights[0];
      this.length--;
      if (this.length > 0) {
        this.ids[0] = this.ids[this.length];
        this.weights[0] = this.weights[this.length];
        this.down(0);
      }
    }
    return kept;
  }
}
