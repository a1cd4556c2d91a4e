import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
} from 'node:fs';
import { open, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { fsyncPathAsync } from '../durable-files.js';

/**
 * A log of files that rows are appended to and synced, then moved into the store and removed (docs/guide.md,
 * "Ingestion"): the interactions log (event-log.ts) and the records log
 * (record-log.ts) are two of it. Its files are segments, each named by the sequence number of its first
 * row; a segment is appended to until it is sealed, and the sealed ones are moved oldest first.
 */

/** A file of the log, with `M`, what its rows carry besides themselves (the interactions' fresh keys). */
export interface Segment<M> {
  file: string;
  first: number;
  rows: number;
  /** Bytes written and synced. */
  bytes: number;
  /** Tenants whose rows it holds. */
  tenants: Set<string>;
  meta: M;
  /** Open while rows are appended to it. */
  handle: Promise<FileHandle> | undefined;
  /** The append in progress, if any (settled when there is none). */
  writing: Promise<void>;
  /**
   * A failed append's bytes may follow `bytes` in the file: the truncation that undoes it failed too. It is
   * tried again before the next append, and before a move, which would otherwise store refused rows.
   */
  tornTail: boolean;
}

/** A segment a previous run left, found at start: `first` from its name. */
export interface FoundSegment {
  file: string;
  first: number;
}

export class SegmentLog<M> {
  /** The segment rows are appended to; none until the first append after a seal. */
  private active: Segment<M> | undefined;
  /** Sealed segments, oldest first, not yet moved. */
  private readonly sealed: Segment<M>[] = [];
  /** Rows appended and not yet moved into the store. */
  private unmovedRows = 0;

  constructor(
    readonly dir: string,
    /** Segments are named `<prefix>-<first row's sequence number>.<extension>`. */
    private readonly prefix: string,
    private readonly extension: string,
    /** What a new segment's rows carry, before any is appended. */
    private readonly newMeta: () => M,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** Rows that are durable here and not yet in the store. */
  get unmoved(): number {
    return this.unmovedRows;
  }

  /** Rows of the segment being appended to. */
  get activeRows(): number {
    return this.active?.rows ?? 0;
  }

  /**
   * Appends the `rows` rows encoded in `bytes`, the first numbered `firstSeq`, and syncs them to disk; once
   * it resolves they survive a crash, and `counted` was told of the segment that holds them (to add their
   * tenants and meta). Appends must not overlap (the write queue makes one at a time). A failed append
   * leaves the segment as it was before it.
   */
  async append(
    bytes: Buffer,
    firstSeq: number,
    rows: number,
    counted: (segment: Segment<M>) => void,
  ): Promise<void> {
    if (rows === 0) return;
    const segment = (this.active ??= this.openSegment(firstSeq));
    const writing = this.write(segment, bytes).then(() => {
      segment.rows += rows;
      segment.bytes += bytes.length;
      counted(segment);
      this.unmovedRows += rows;
    });
    // A seal waits for this append, and finds its rows counted.
    segment.writing = writing.catch(() => undefined);
    try {
      await writing;
    } catch (error) {
      // A segment that never took a row is given up, so that the next append opens a fresh one.
      if (segment.rows === 0 && this.active === segment) {
        this.active = undefined;
        void segment.handle?.then((handle) => handle.close()).catch(() => undefined);
        await rm(segment.file, { force: true });
      }
      throw error;
    }
  }

  private async write(segment: Segment<M>, bytes: Buffer): Promise<void> {
    const handle = await segment.handle!;
    if (segment.tornTail) {
      await handle.truncate(segment.bytes);
      await handle.datasync();
      segment.tornTail = false;
    }
    try {
      for (let done = 0; done < bytes.length;) {
        const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, segment.bytes + done);
        done += bytesWritten;
      }
      await handle.datasync();
    } catch (error) {
      // Rows whose write was not acknowledged must not be moved later with the segment.
      try {
        await handle.truncate(segment.bytes);
        await handle.datasync();
      } catch {
        segment.tornTail = true;
      }
      throw error;
    }
  }

  private openSegment(first: number): Segment<M> {
    const file = path.join(this.dir, `${this.prefix}-${String(first).padStart(16, '0')}.${this.extension}`);
    const handle = open(file, 'w').then(async (opened) => {
      try {
        // The segment's name must be durable before its rows are acknowledged.
        await fsyncPathAsync(this.dir);
        return opened;
      } catch (error) {
        await opened.close();
        throw error;
      }
    });
    return {
      file,
      first,
      rows: 0,
      bytes: 0,
      tenants: new Set(),
      meta: this.newMeta(),
      handle,
      writing: Promise.resolve(),
      tornTail: false,
    };
  }

  /** Ends the active segment: later appends start a new one. */
  async seal(): Promise<void> {
    const segment = this.active;
    if (!segment) return;
    this.active = undefined;
    await segment.writing;
    const handle = await segment.handle?.catch(() => undefined);
    await handle?.close();
    segment.handle = undefined;
    if (segment.rows > 0) this.sealed.push(segment);
    else await rm(segment.file, { force: true });
  }

  /**
   * Seals the active segment and moves every sealed one into the store with `move`, oldest first; `move`
   * throws only if its transaction did not commit, and then that segment and those after it stay for the
   * next call. Returns the tenants whose rows moved.
   */
  async moveAll(move: (segment: Segment<M>) => Promise<void>): Promise<Set<string>> {
    await this.seal();
    const tenants = new Set<string>();
    while (this.sealed.length > 0) {
      const segment = this.sealed[0];
      if (segment.tornTail) {
        await truncate(segment.file, segment.bytes);
        await fsyncPathAsync(segment.file);
        segment.tornTail = false;
      }
      await move(segment);
      // Moved: whatever happens next, it is never moved again (a file left behind is dealt with at start).
      this.sealed.shift();
      this.unmovedRows -= segment.rows;
      for (const tenantId of segment.tenants) tenants.add(tenantId);
      await rm(segment.file, { force: true });
    }
    return tenants;
  }
}

/**
 * The segments named `<prefix>-<number>.<extension>` in `dir` that a previous run left, oldest first, each
 * cut after its last complete line (a row cut short by a crash was never acknowledged); those left empty
 * by that are listed too, with `empty` set, to be removed.
 */
export function segmentsLeft(
  dir: string,
  prefix: string,
  extension: string,
): (FoundSegment & { empty: boolean })[] {
  const pattern = new RegExp(`^${prefix}-(\\d{16})\\.${extension}$`);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => pattern.test(name));
  } catch {
    return [];
  }
  return names.sort().map((name) => {
    const file = path.join(dir, name);
    return { file, first: Number(pattern.exec(name)![1]), empty: dropTornTail(file) === 0 };
  });
}

/** Truncates the file after its last complete line; returns the bytes left. */
function dropTornTail(file: string): number {
  const fd = openSync(file, 'r+');
  try {
    let end = fstatSync(fd).size;
    const chunk = Buffer.alloc(64 * 1024);
    let keep = 0;
    search: while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const read = readSync(fd, chunk, 0, end - start, start);
      for (let i = read - 1; i >= 0; i--) {
        if (chunk[i] === 0x0a) {
          keep = start + i + 1;
          break search;
        }
      }
      end = start;
    }
    if (keep < fstatSync(fd).size) {
      ftruncateSync(fd, keep);
      fsyncSync(fd);
    }
    return keep;
  } finally {
    closeSync(fd);
  }
}
