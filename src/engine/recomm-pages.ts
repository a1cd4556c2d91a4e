import { hashText, requestOf, requestTexts, userIdOf } from './page-request.js';
import { recommIdBits } from './recomm-id.js';
import type { RecommendationRequest } from './request.js';
import { SharedTexts } from './shared-texts.js';

/**
 * What a recommId may be paged from (docs/guide.md, "The next page"): the request that made its answer, as
 * the route read it, and every item of that answer and of the pages before it. Items are dense ids of the
 * tenant's catalog: a deleted item's id names nothing, and an item upserted again under its external id is
 * a new item (docs/guide.md, "Deleting items").
 */
export interface Page {
  /** The chain's first request; its `exclude` is not kept (`excluded` is). */
  readonly request: RecommendationRequest;
  /** The items the first request excluded, by dense id. */
  readonly excluded: ArrayLike<number>;
  /** The items shown so far in the chain, this answer's included, by dense id. */
  readonly shown: ArrayLike<number>;
}

export interface RecommPagesOptions {
  /** Everything the pages take: the arena, its index and the shapes of requests (docs/memory.md). */
  maxBytes: number;
  ttlMs: number;
  /** The clock of the TTL, in milliseconds (default: `performance.now`). */
  now?: () => number;
}

const MIB = 1024 * 1024;

/** 30 minutes of paging (docs/guide.md, "The next page"), in at most 12 MiB (docs/memory.md, "Pages of answers"). */
export const DEFAULT_PAGES: RecommPagesOptions = { maxBytes: 12 * MIB, ttlMs: 30 * 60_000 };

// An entry, at an offset of the arena that is a multiple of 8: a header of 16 words, then its arrays (the
// rotated items' factors, then the shown, excluded and rotated dense ids, then search's vector), then its
// request's own fields and, when its shape has no number, its shape (engine/page-request.ts) in UTF-8,
// padded to a multiple of 8 bytes.
/** Its length in bytes, padding included. */
const LENGTH = 0;
/** The recommId's 128 bits, four words (`recommIdBits`). */
const ID = 1;
/** The tenant's number (`tenantNumbers`); DEAD once forgotten. */
const TENANT = 5;
/** A hash of the request's userId (`hashText`), to find a deleted user's pages without reading them all. */
const USER = 6;
/** The number of the request's shape among `shapes`; -1: the entry holds it (SHAPE_BYTES). */
const SHAPE = 7;
const OWN_BYTES = 8;
const SHAPE_BYTES = 9;
const SHOWN = 10;
const EXCLUDED = 11;
const ROTATED = 12;
/** The search vector's length; -1: none. */
const VECTOR = 13;
/** The time of its answer (`now()`), a double at word 14. */
const STORED_AT = 14;
const HEADER_BYTES = 64;
const DEAD = -1;
/** An entry's least size: its header and `{}`, padded. */
const MIN_ENTRY = 72;
/** Slots of the index per entry the arena may hold at most: at most half of them are taken. */
const SLOTS_PER_ENTRY = 2;
/** A page larger than this share of the arena is not kept (its recommId cannot be paged). */
const MAX_ENTRY_SHARE = 1 / 16;
/** The share of the bound the shapes of requests may take. */
const SHAPES_SHARE = 1 / 16;

/** Where a recommId's search for a slot starts: its last two words are random (a version 4 UUID). */
function homeSlot(id2: number, id3: number, slots: number): number {
  return (Math.imul(id2 ^ Math.imul(id3, 0x9e3779b1), 0x85ebca6b) >>> 0) % slots;
}

function padded(bytes: number): number {
  return (bytes + 7) & ~7;
}

/** The typed views of one arena, and its index. */
interface Arena {
  bytes: Uint8Array;
  words: Int32Array;
  doubles: Float64Array;
  floats: Float32Array;
  /** By recommId (`homeSlot`, then the next slots): an entry's offset / 8 + 1; 0: free. */
  slots: Int32Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The pages of the answers given, by tenant and recommId, for `POST /recommendations/next`
 * (docs/memory.md, "Pages of answers"). They are packed one after the other into one arena of bytes, each
 * its request as JSON and its items as dense ids, and found by their recommId's bits in an index of open
 * addressing beside it: no object per page. The part of a request that many share (its shape) is kept
 * once for all of them. What they take is the two arrays, allocated at the first page and given back once
 * none is left, and the shapes. A page expires 30 minutes after its answer; when the arena is full, the
 * oldest are overwritten first. Kept in the process: paging does not survive a restart.
 */
export class RecommPages {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly arenaBytes: number;
  private readonly slotCount: number;
  private readonly shapes: SharedTexts;
  private arena?: Arena;
  /** Where the next entry goes. */
  private head = 0;
  /** The oldest entry. */
  private tail = 0;
  /** Where the older lap's entries end, once the newer lap has started again at 0; -1: one lap. */
  private lapEnd = -1;
  /** Entries in the arena, forgotten ones included until they are overwritten or purged. */
  private count = 0;
  /** Of `count`, those forgotten. */
  private dead = 0;
  private readonly tenantNumbers = new Map<string, number>();

  constructor(options: RecommPagesOptions = DEFAULT_PAGES) {
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? (() => performance.now());
    const shapeBytes = Math.floor(options.maxBytes * SHAPES_SHARE);
    this.shapes = new SharedTexts(shapeBytes);
    // The index takes SLOTS_PER_ENTRY words per MIN_ENTRY bytes of the arena.
    const perByte = 1 + (SLOTS_PER_ENTRY * 4) / MIN_ENTRY;
    this.arenaBytes = Math.floor((options.maxBytes - shapeBytes) / perByte / MIN_ENTRY) * MIN_ENTRY;
    if (this.arenaBytes < 16 * MIN_ENTRY) throw new Error('the pages need at least 2 KiB');
    this.slotCount = (this.arenaBytes / MIN_ENTRY) * SLOTS_PER_ENTRY;
  }

  /** Pages held, stale ones included until `purgeStale`. */
  get size(): number {
    return this.count - this.dead;
  }

  /** What they take: the arena and its index while any page is kept, and the shapes of their requests. */
  get bytes(): number {
    const arena = this.arena;
    return (arena ? arena.bytes.byteLength + arena.slots.byteLength : 0) + this.shapes.bytes;
  }

  /** Remembers an answer's page; recommIds are engine/recomm-id.ts's (a page under another text is not kept). */
  remember(tenantId: string, recommId: string, page: Page): void {
    const id = recommIdBits(recommId);
    if (id === undefined) return;
    const { request, excluded, shown } = page;
    const texts = requestTexts(request);
    const ownBytes = Buffer.byteLength(texts.own);
    const rotated = request.rotated?.ids.length ?? 0;
    const vector = request.search?.vector;
    const arrays = 8 * rotated + 4 * (shown.length + excluded.length + rotated + (vector?.length ?? 0));
    const shapeBytes = Buffer.byteLength(texts.shape);
    // Not kept at all rather than with its shape when it would be too large either way.
    if (padded(HEADER_BYTES + arrays + ownBytes + shapeBytes) > this.arenaBytes * MAX_ENTRY_SHARE) return;
    const tenant = this.tenantNumber(tenantId);
    this.forgetPage(id, tenant);
    const shape = this.shapes.acquire(texts.shape);
    const inlineShape = shape < 0 ? shapeBytes : 0;
    const length = padded(HEADER_BYTES + arrays + ownBytes + inlineShape);
    const arena = (this.arena ??= this.allocate());
    const offset = this.place(length);
    const { words, doubles, floats, bytes } = arena;
    const at = offset >> 2;
    words[at + LENGTH] = length;
    words.set(id, at + ID);
    words[at + TENANT] = tenant;
    words[at + USER] = hashText(request.userId);
    words[at + SHAPE] = shape;
    words[at + OWN_BYTES] = ownBytes;
    words[at + SHAPE_BYTES] = inlineShape;
    words[at + SHOWN] = shown.length;
    words[at + EXCLUDED] = excluded.length;
    words[at + ROTATED] = rotated;
    words[at + VECTOR] = vector ? vector.length : -1;
    doubles[(offset + 4 * STORED_AT) >> 3] = this.now();
    let next = offset + HEADER_BYTES;
    if (request.rotated) {
      doubles.set(request.rotated.factors, next >> 3);
      next += 8 * rotated;
    }
    for (const ids of [shown, excluded, request.rotated?.ids ?? []]) {
      words.set(ids, next >> 2);
      next += 4 * ids.length;
    }
    if (vector) {
      floats.set(vector, next >> 2);
      next += 4 * vector.length;
    }
    encoder.encodeInto(texts.own, bytes.subarray(next, next + ownBytes));
    if (shape < 0)
      encoder.encodeInto(texts.shape, bytes.subarray(next + ownBytes, next + ownBytes + shapeBytes));
    this.count++;
    this.head = offset + length;
    this.index(offset);
  }

  /** The page of a tenant's recommId, while it may be paged. */
  get(tenantId: string, recommId: string): Page | undefined {
    const id = recommIdBits(recommId);
    const tenant = this.tenantNumbers.get(tenantId);
    const arena = this.arena;
    if (id === undefined || tenant === undefined || arena === undefined) return undefined;
    const offset = this.find(id, tenant);
    if (offset < 0) return undefined;
    const { words, doubles, floats } = arena;
    if (this.now() - doubles[(offset + 4 * STORED_AT) >> 3] > this.ttlMs) return undefined;
    const at = offset >> 2;
    const rotated = words[at + ROTATED];
    const vector = words[at + VECTOR];
    let next = offset + HEADER_BYTES;
    const factors = doubles.slice(next >> 3, (next >> 3) + rotated);
    next += 8 * rotated;
    const ints = (length: number) => {
      const ids = words.slice(next >> 2, (next >> 2) + length);
      next += 4 * length;
      return ids;
    };
    const shown = ints(words[at + SHOWN]);
    const excluded = ints(words[at + EXCLUDED]);
    const rotatedIds = ints(rotated);
    const searchVector = vector >= 0 ? floats.slice(next >> 2, (next >> 2) + vector) : undefined;
    const request = requestOf({ own: this.ownText(offset, arena), shape: this.shapeText(offset, arena) });
    if (rotated > 0) request.rotated = { ids: rotatedIds, factors };
    if (searchVector && request.search) request.search.vector = searchVector;
    return { request, excluded, shown };
  }

  /** Drops the pages older than the TTL (the daemon calls it every few seconds: docs/memory.md). */
  purgeStale(): void {
    const arena = this.arena;
    if (!arena) return;
    const since = this.now() - this.ttlMs;
    while (this.count > 0) {
      const offset = this.tail;
      const stale =
        arena.words[(offset >> 2) + TENANT] === DEAD || arena.doubles[(offset + 4 * STORED_AT) >> 3] < since;
      if (!stale) break;
      this.evictOldest();
    }
    // Nothing left to page: the memory goes back until the next answer.
    if (this.count === 0) this.arena = undefined;
  }

  /** Forgets the pages of deleted users' requests: found by their hash, then by their request. */
  forget(tenantId: string, userIds: readonly string[]): void {
    const tenant = this.tenantNumbers.get(tenantId);
    const arena = this.arena;
    if (tenant === undefined || !arena) return;
    const forgotten = new Set(userIds);
    const hashes = new Set(userIds.map(hashText));
    let offset = this.tail;
    let lapEnd = this.lapEnd;
    for (let i = 0; i < this.count; i++) {
      if (offset === lapEnd) {
        offset = 0;
        lapEnd = -1;
      }
      const at = offset >> 2;
      const length = arena.words[at + LENGTH];
      if (arena.words[at + TENANT] === tenant && hashes.has(arena.words[at + USER])) {
        const userId = userIdOf(this.ownText(offset, arena));
        if (userId !== undefined && forgotten.has(userId)) this.kill(offset, arena);
      }
      offset += length;
    }
  }

  private tenantNumber(tenantId: string): number {
    let tenant = this.tenantNumbers.get(tenantId);
    if (tenant === undefined) this.tenantNumbers.set(tenantId, (tenant = this.tenantNumbers.size));
    return tenant;
  }

  private allocate(): Arena {
    const buffer = new ArrayBuffer(this.arenaBytes);
    this.head = this.tail = this.count = this.dead = 0;
    this.lapEnd = -1;
    return {
      bytes: new Uint8Array(buffer),
      words: new Int32Array(buffer),
      doubles: new Float64Array(buffer),
      floats: new Float32Array(buffer),
      slots: new Int32Array(this.slotCount),
    };
  }

  /** Where the texts of the entry at `offset` start: after its header and arrays. */
  private textsStart(offset: number, words: Int32Array): number {
    const at = offset >> 2;
    return (
      offset +
      HEADER_BYTES +
      12 * words[at + ROTATED] +
      4 * (words[at + SHOWN] + words[at + EXCLUDED] + Math.max(0, words[at + VECTOR]))
    );
  }

  private ownText(offset: number, arena: Arena): string {
    const start = this.textsStart(offset, arena.words);
    return decoder.decode(arena.bytes.subarray(start, start + arena.words[(offset >> 2) + OWN_BYTES]));
  }

  private shapeText(offset: number, arena: Arena): string {
    const at = offset >> 2;
    const shape = arena.words[at + SHAPE];
    if (shape >= 0) return this.shapes.text(shape);
    const start = this.textsStart(offset, arena.words) + arena.words[at + OWN_BYTES];
    return decoder.decode(arena.bytes.subarray(start, start + arena.words[at + SHAPE_BYTES]));
  }

  /**
   * The offset for a new entry of `length` bytes: at `head` when it fits before the end, else at 0 (the
   * entries before it then make the older lap), once the oldest entries in its way are gone.
   */
  private place(length: number): number {
    for (;;) {
      // With no entry, head is 0 (evictOldest), and an entry is never longer than the arena.
      if (this.lapEnd < 0) {
        if (this.head + length <= this.arenaBytes) return this.head;
        this.lapEnd = this.head;
        this.head = 0;
      }
      if (this.head + length <= this.tail) return this.head;
      this.evictOldest();
    }
  }

  private evictOldest(): void {
    const arena = this.arena!;
    const offset = this.tail;
    const at = offset >> 2;
    if (arena.words[at + TENANT] === DEAD) this.dead--;
    else this.release(offset, arena);
    this.tail = offset + arena.words[at + LENGTH];
    this.count--;
    if (this.tail === this.lapEnd) {
      this.tail = 0;
      this.lapEnd = -1;
    }
    if (this.count === 0) {
      this.head = this.tail = 0;
      this.lapEnd = -1;
    }
  }

  /** What a live entry holds beside its bytes: its slot in the index, its reference to its shape. */
  private release(offset: number, arena: Arena): void {
    this.unindex(offset, arena);
    const shape = arena.words[(offset >> 2) + SHAPE];
    if (shape >= 0) this.shapes.release(shape);
  }

  /** Forgets a page before its time: what it holds released, its bytes cleared. */
  private kill(offset: number, arena: Arena): void {
    this.release(offset, arena);
    const at = offset >> 2;
    const length = arena.words[at + LENGTH];
    arena.bytes.fill(0, offset, offset + length);
    arena.words[at + LENGTH] = length;
    arena.words[at + TENANT] = DEAD;
    this.dead++;
  }

  /** Forgets the page of a recommId remembered again. */
  private forgetPage(id: Int32Array, tenant: number): void {
    const offset = this.arena ? this.find(id, tenant) : -1;
    if (offset >= 0) this.kill(offset, this.arena!);
  }

  private find(id: Int32Array, tenant: number): number {
    const { slots, words } = this.arena!;
    for (let slot = homeSlot(id[2], id[3], this.slotCount); ; slot = (slot + 1) % this.slotCount) {
      const held = slots[slot];
      if (held === 0) return -1;
      const offset = (held - 1) * 8;
      const at = offset >> 2;
      if (
        words[at + ID + 3] === id[3] &&
        words[at + ID + 2] === id[2] &&
        words[at + ID + 1] === id[1] &&
        words[at + ID] === id[0] &&
        words[at + TENANT] === tenant
      )
        return offset;
    }
  }

  private homeOf(offset: number, words: Int32Array): number {
    const at = offset >> 2;
    return homeSlot(words[at + ID + 2], words[at + ID + 3], this.slotCount);
  }

  private index(offset: number): void {
    const { slots, words } = this.arena!;
    let slot = this.homeOf(offset, words);
    while (slots[slot] !== 0) slot = (slot + 1) % this.slotCount;
    slots[slot] = offset / 8 + 1;
  }

  /** Takes an entry out of the index, moving back the entries after it that would no longer be found. */
  private unindex(offset: number, arena: Arena): void {
    const { slots, words } = arena;
    const held = offset / 8 + 1;
    let hole = this.homeOf(offset, words);
    while (slots[hole] !== held) hole = (hole + 1) % this.slotCount;
    for (let slot = (hole + 1) % this.slotCount; slots[slot] !== 0; slot = (slot + 1) % this.slotCount) {
      const home = this.homeOf((slots[slot] - 1) * 8, words);
      // It stays when its home lies cyclically after the hole, up to its own slot.
      const stays = hole < slot ? home > hole && home <= slot : home > hole || home <= slot;
      if (stays) continue;
      slots[hole] = slots[slot];
      hole = slot;
    }
    slots[hole] = 0;
  }
}
