import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Files written so that a crash leaves the old state or the new one, never half: written under a partial
 * name of the writing process, made durable, then renamed into place. Shared by the lake, model artifacts
 * and the store.
 */

/** Where `file` is written before it is renamed into place (never matched by the lake's or artifacts' listings). */
export function partialName(file: string): string {
  return `${file}.${process.pid}.partial`;
}

/** Flushes a file, or a directory's entries (a rename in it), to the disk. */
export function fsyncPath(target: string): void {
  const fd = openSync(target, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * fsyncPath off the event loop, for code that runs while the daemon serves: a sync waits for the disk, and
 * behind whatever the machine is writing (a build spilling gigabytes), for tens of milliseconds.
 */
export async function fsyncPathAsync(target: string): Promise<void> {
  const handle = await open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function writeDurably(file: string, bytes: Uint8Array | string): void {
  writeFileSync(file, bytes);
  fsyncPath(file);
}

/**
 * Replaces `file` whole: written durably under a partial name, then renamed into place. A write that fails
 * (a full disk) leaves `file` as it was and removes the partial one, which would hold the room.
 */
export function replaceDurably(file: string, bytes: Uint8Array | string): void {
  const partial = partialName(file);
  try {
    writeDurably(partial, bytes);
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

/** replaceDurably off the event loop (see fsyncPathAsync). */
export async function replaceDurablyAsync(file: string, bytes: Uint8Array | string): Promise<void> {
  const partial = partialName(file);
  try {
    await writeFile(partial, bytes);
    await fsyncPathAsync(partial);
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes what writers that ended mid-way (a killed process) left under partial names in `dir`. */
export function removeAbandonedPartials(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const pid = /\.(\d+)\.partial$/.exec(name)?.[1];
    if (pid !== undefined && !running(Number(pid)))
      rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}
