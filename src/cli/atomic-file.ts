/**
 * Replacing a file atomically, the one way every command does it (`ranges update`, `scan --out`'s
 * resume rewrite, `scripts/build-ranges.ts`): the new content goes to a temporary file with an
 * unpredictable name, created exclusively (`wx`: O_CREAT | O_EXCL, which never follows a symlink and
 * never opens a file someone planted) in the target's own directory, then renamed over the target.
 * A reader sees the old file or the new one, never half of one; names planted in advance (the old
 * predictable `<out>.<pid>.tmp`) are neither followed nor touched.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Random bytes in a temporary name: 128 bits, hex, so nobody can guess the name to plant a link there first. */
export const TEMPORARY_NAME_RANDOM_BYTES = 16;
/** Names tried before giving up when each one exists already (with 128 random bits, only a broken random source collides). */
export const TEMPORARY_NAME_ATTEMPTS = 5;
/** Bytes gathered before one write when the content comes as many small pieces (a scan's lines). */
const WRITE_CHUNK_BYTES = 64 * 1024;

/** A temporary name beside `target`: `.<name>.<32 hex digits>.tmp`, hidden, in the same directory (so the rename stays on one file system). */
export function temporaryNameFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(TEMPORARY_NAME_RANDOM_BYTES).toString('hex')}.tmp`);
}

/** Creates a fresh temporary file beside `target` (exclusively, mode 0666 less the umask) and returns its path and handle. */
async function createTemporary(target: string): Promise<{ path: string; handle: FileHandle }> {
  for (let attempt = 1; ; attempt++) {
    const path = temporaryNameFor(target);
    try {
      return { path, handle: await open(path, 'wx') };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= TEMPORARY_NAME_ATTEMPTS) throw error;
    }
  }
}

/**
 * Writes `content` (a string, or pieces of it from an iterable) to `target` atomically: a fresh
 * temporary file, flushed to disk, then renamed over `target`. On any failure the temporary file
 * is removed, `target` is left as it was, and the error is thrown.
 */
export async function writeFileAtomically(target: string, content: string | AsyncIterable<string> | Iterable<string>): Promise<void> {
  const { path, handle } = await createTemporary(target);
  try {
    try {
      if (typeof content === 'string') await handle.writeFile(content, 'utf8');
      else {
        let pending = '';
        for await (const piece of content) {
          pending += piece;
          if (pending.length >= WRITE_CHUNK_BYTES) {
            await handle.write(pending, null, 'utf8');
            pending = '';
          }
        }
        if (pending !== '') await handle.write(pending, null, 'utf8');
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(path, target);
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
}
